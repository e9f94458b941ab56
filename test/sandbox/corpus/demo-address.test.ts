import { expect, it } from 'vitest';
import { DEMO_ACCOUNT_ADDRESS } from '../../../src/cli/runtime.js';
import { DEMO_ADDRESS } from '../../../src/sandbox/corpus/index.js';

it('the serving path names the same demo owner as the corpus', () => {
  expect(DEMO_ACCOUNT_ADDRESS).toBe(DEMO_ADDRESS);
});
