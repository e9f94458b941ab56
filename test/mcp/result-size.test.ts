import { describe, expect, it } from 'vitest';
import { MAX_RESULT_BYTES } from '../../src/mail/bounds.js';
import { toolResult } from '../../src/mcp/server.js';
import { Fence } from '../../src/mcp/untrusted.js';

/* Issue 23: the one place results are built never sends one larger than MAX_RESULT_BYTES. */

describe('toolResult size guard', () => {
  it('sends a result under the bound as it is', () => {
    const f = new Fence('abc123');
    const r = toolResult({ body: f.wrapText('x'.repeat(100_000)) }, f);
    expect(r.isError).toBeUndefined();
    expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThanOrEqual(MAX_RESULT_BYTES);
  });

  it('answers result_too_large, naming the size and how to ask for less, for one over it', () => {
    const f = new Fence('abc123');
    // Three-byte characters: 100,000 of them are 300,000 bytes in each of the two copies.
    const r = toolResult({ body: f.wrapText('語'.repeat(100_000)) }, f);
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    const text = (r.content[0] as { text: string }).text;
    const envelope = JSON.parse(text) as { code: string; message: string; retryable: boolean };
    expect(envelope.code).toBe('result_too_large');
    expect(envelope.message).toMatch(/at most 524288 bytes/);
    expect(envelope.message).toMatch(/lastN/);
    expect(Buffer.byteLength(text)).toBeLessThan(2_000);
  });
});
