import { describe, expect, it } from 'vitest';
import { tuneTiering } from '../../src/cli/tiering.js';

/*
 * The server raises V8's interrupt budget for its own process (src/cli/tiering.ts); what that
 * saves per call is measured by bench/gmail-instructions.mjs, not here. What a person relies on:
 * a budget they give node themselves is theirs, in either spelling V8 accepts, and no V8 but the
 * one it was measured on is handed the flag (an unknown flag is printed on standard output, the
 * MCP channel).
 */
const NODE_20_V8 = '11.3.244.8-node.33';

describe('V8 tiering for the server process', () => {
  it('leaves a budget given on node’s command line alone', () => {
    expect(tuneTiering(['--interrupt-budget=1000'], NODE_20_V8)).toBe(false);
    expect(tuneTiering(['--max-old-space-size=512', '--interrupt_budget=1000'], NODE_20_V8)).toBe(false);
    expect(tuneTiering(['--interrupt-budget'], NODE_20_V8)).toBe(false);
  });

  it('sets its own budget on V8 11 otherwise', () => {
    expect(tuneTiering([], NODE_20_V8)).toBe(true);
    // A flag that only starts with the name is another flag.
    expect(tuneTiering(['--interrupt-budget-for-feedback-allocation=100'], NODE_20_V8)).toBe(true);
  });

  it('hands no flag to another V8', () => {
    expect(tuneTiering([], '12.4.254.21-node.33')).toBe(false);
    expect(tuneTiering([], '13.6.233.10-node.18')).toBe(false);
  });
});
