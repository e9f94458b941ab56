import { z } from 'zod';
import type { SignalDetails } from '../../mail/signals.js';
import { SIGNAL_NAMES } from '../../mail/vocabulary.js';
import type { Fence } from '../../mcp/untrusted.js';

/* Result fields several tool families share: signals, usage, reused folder checks. */

export const signalsSchema = z
  .array(z.enum(SIGNAL_NAMES))
  .describe(
    'from the first message: newsletter, automated, calendar (invite), replyToMismatch, displayNameSpoof (display name shows another domain), lookalikeDomain (From domain imitates another)',
  );

export const signalDetailsSchema = z
  .object({ resembles: z.string().optional(), replyTo: z.string().optional(), claims: z.string().optional() })
  .describe('fenced domains: resembles (lookalikeDomain), replyTo, claims (displayNameSpoof)');

export function fenceSignalDetails(d: SignalDetails, f: Fence): SignalDetails {
  const out: SignalDetails = {};
  if (d.resembles !== undefined) out.resembles = f.wrap(d.resembles);
  if (d.replyTo !== undefined) out.replyTo = f.wrap(d.replyTo);
  if (d.claims !== undefined) out.claims = f.wrap(d.claims);
  return out;
}

export const usage = z.object({ requests: z.number(), quotaUnits: z.number() });

/**
 * A read-only result whose labels were not located in some folders (src/providers/freshness.ts):
 * the server fills it in; a tool only declares it.
 */
export const uncheckedPlacesField = z
  .array(z.string())
  .optional()
  .describe(
    'IMAP without LIST-STATUS: folders this call did not look in for copies (not indexed yet); a label from them is not shown',
  );

/**
 * A read-only result whose labels partly rest on a folder check an earlier call made
 * (src/providers/freshness.ts): the server fills it in; a tool only declares it.
 */
export const reusedChecksField = z
  .object({ places: z.array(z.string()), oldestSeconds: z.number() })
  .optional()
  .describe(
    'IMAP without LIST-STATUS: folders whose copies (labels) were located from a check an earlier call made, at most oldestSeconds ago, not asked again',
  );
