/** The error envelope of an isError result, as src/mcp/server.ts writes it into the text content. */
export interface Envelope {
  code: string;
  message: string;
  retryable: boolean;
  field?: string;
  retryAfterSeconds?: number;
}

/** Reads the envelope from an error result's text (every client can read it; none validates it). */
export function envelopeOf(text: string): Envelope {
  const parsed = JSON.parse(text) as Envelope;
  if (typeof parsed.code !== 'string' || typeof parsed.message !== 'string')
    throw new Error(`not an error envelope: ${text}`);
  return parsed;
}
