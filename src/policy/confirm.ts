import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { MailError, invalidInput } from '../mail/errors.js';

/**
 * Confirmations (docs/architecture.md, promise 4): before a consequential write (create_filter, unsubscribe,
 * large bulk changes) the server asks the human through MCP elicitation. The answer travels
 * between the client and the server only; the model never sees the question or answers it.
 * This module is the decision logic; src/mcp/confirm.ts does the protocol plumbing for both
 * protocol revisions.
 */

export const CONFIRM_MODES = ['off', 'ask', 'require'] as const;
export type ConfirmMode = (typeof CONFIRM_MODES)[number];

/**
 * `ask` by default: with a client that can show a question the human is asked; with one that
 * cannot, the call proceeds (and says it was not confirmed), so mailwarden still works in
 * clients without elicitation. `require` refuses instead; `off` never asks.
 */
export const DEFAULT_CONFIRM_MODE: ConfirmMode = 'ask';

export function confirmModeFromEnv(env: Record<string, string | undefined>): ConfirmMode {
  const raw = env['MAILWARDEN_CONFIRM']?.trim().toLowerCase();
  if (raw === undefined || raw === '') return DEFAULT_CONFIRM_MODE;
  if ((CONFIRM_MODES as readonly string[]).includes(raw)) return raw as ConfirmMode;
  throw invalidInput('MAILWARDEN_CONFIRM', `"${raw}" is not one of ${CONFIRM_MODES.join(', ')}`);
}

/** What a tool asks. `details` are shown to the human as "key: value" lines under the message. */
export interface ConfirmRequest {
  message: string;
  details?: Record<string, string | number | boolean>;
  /**
   * A policy rule that needs a person whatever MAILWARDEN_CONFIRM says (a standing move): the
   * person is asked even with `off`, and a client that cannot ask is refused, naming the rule.
   */
  required?: { rule: string; why: string };
}

/**
 * How ctx.confirm() returned (it throws when the human said no or the call is refused):
 * confirmed — the human accepted; not_required — MAILWARDEN_CONFIRM=off; unavailable — mode
 * `ask` and the client cannot elicit, so nobody was asked.
 */
export type ConfirmOutcome = 'confirmed' | 'not_required' | 'unavailable';

export type ConfirmDecision = 'ask' | 'skip' | 'proceed_unconfirmed' | 'refuse';

export function decideConfirmation(
  mode: ConfirmMode,
  clientCanElicit: boolean,
  required = false,
): ConfirmDecision {
  if (required) return clientCanElicit ? 'ask' : 'refuse';
  if (mode === 'off') return 'skip';
  if (clientCanElicit) return 'ask';
  return mode === 'require' ? 'refuse' : 'proceed_unconfirmed';
}

export function cannotAsk(): MailError {
  return new MailError(
    'forbidden_operation',
    "this change needs the user's confirmation and MAILWARDEN_CONFIRM=require, but the MCP client cannot ask (it does not support elicitation). Nothing was changed. Use a client with elicitation, or set MAILWARDEN_CONFIRM=ask to proceed without asking.",
    { retryable: false },
  );
}

/** A rule that needs a person, and a client that cannot ask one. */
export function needsPerson(required: { rule: string; why: string }): MailError {
  return new MailError(
    'forbidden_operation',
    `refused by the write policy (${required.rule}): ${required.why}, so a person must confirm it, and this MCP client cannot ask (it does not support elicitation). Nothing was changed. Use a client with elicitation, or make the change in the mail client yourself.`,
    { retryable: false },
  );
}

export function declinedByUser(): MailError {
  return new MailError(
    'declined_by_user',
    'the user declined this change when asked to confirm it; nothing was changed. Do not retry unless the user asks for it again.',
    { retryable: false },
  );
}

/** Elicitation strings are shown in a dialog; keep them readable and bounded. */
const MAX_TEXT = 4000;

export function confirmationText(req: ConfirmRequest): string {
  const lines = [req.message.trim()];
  for (const [k, v] of Object.entries(req.details ?? {})) lines.push(`${k}: ${String(v)}`);
  const text = lines.join('\n');
  return text.length <= MAX_TEXT ? text : `${text.slice(0, MAX_TEXT - 1)}…`;
}

/** The elicitation form: one boolean the human must set to true. */
export const CONFIRM_FIELD = 'confirm';
export const CONFIRM_SCHEMA = {
  type: 'object' as const,
  properties: {
    [CONFIRM_FIELD]: {
      type: 'boolean' as const,
      title: 'Yes, make this change',
      description: 'mailwarden makes the change only when this is checked and you accept.',
      default: false,
    },
  },
  required: [CONFIRM_FIELD],
};

/**
 * An elicitation result read strictly: only `accept` with confirm === true is a yes. Decline,
 * cancel, a missing or malformed answer are all no.
 */
export function isAcceptance(answer: unknown): boolean {
  if (answer === null || typeof answer !== 'object') return false;
  const a = answer as { action?: unknown; content?: unknown };
  if (a.action !== 'accept' || a.content === null || typeof a.content !== 'object') return false;
  return (a.content as Record<string, unknown>)[CONFIRM_FIELD] === true;
}

/** JSON with object keys sorted, so equal arguments hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The one call a confirmation answers: tool, account and arguments, hashed. */
export function callBinding(tool: string, account: string, args: unknown): string {
  return createHash('sha256').update(canonicalJson({ tool, account, args })).digest('hex');
}

// ---- 2026-07-28 requestState --------------------------------------------------------------------
// In the multi-round-trip revision the question goes back to the client as `input_required`
// and the answer arrives on a retried request, together with the opaque `requestState` the
// server minted. The client can put anything there, so the state is MACed with a per-process
// key, names the call it was minted for, expires, and is accepted once.

const STATE_PREFIX = 'mwc1';
export const CONFIRM_STATE_TTL_MS = 10 * 60_000;

interface StatePayload {
  /** callBinding of the call the question was asked for. */
  b: string;
  /** Nonce: one answer, one call. */
  n: string;
  /** Expiry, ms since the epoch. */
  e: number;
}

function mac(key: Uint8Array, payload: string): string {
  return createHmac('sha256', key).update(`${STATE_PREFIX}.${payload}`).digest('base64url');
}

export function mintConfirmState(key: Uint8Array, binding: string, nonce: string, expiresAt: number): string {
  const payload = Buffer.from(
    JSON.stringify({ b: binding, n: nonce, e: expiresAt } satisfies StatePayload),
  ).toString('base64url');
  return `${STATE_PREFIX}.${payload}.${mac(key, payload)}`;
}

export type StateCheck = { ok: true; nonce: string; expiresAt: number } | { ok: false; reason: string };

/** Verifies a requestState for this call at `now`; says why not when it is not good. */
export function checkConfirmState(key: Uint8Array, state: unknown, binding: string, now: number): StateCheck {
  if (typeof state !== 'string') return { ok: false, reason: 'no request state' };
  const [prefix, payload, sig, ...rest] = state.split('.');
  if (prefix !== STATE_PREFIX || payload === undefined || sig === undefined || rest.length > 0) {
    return { ok: false, reason: 'not a mailwarden confirmation state' };
  }
  const want = Buffer.from(mac(key, payload));
  const got = Buffer.from(sig);
  if (want.length !== got.length || !timingSafeEqual(want, got))
    return { ok: false, reason: 'bad signature' };
  let parsed: Partial<StatePayload>;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Partial<StatePayload>;
  } catch {
    return { ok: false, reason: 'unreadable payload' };
  }
  if (typeof parsed.n !== 'string' || typeof parsed.e !== 'number' || typeof parsed.b !== 'string') {
    return { ok: false, reason: 'malformed payload' };
  }
  if (parsed.b !== binding) return { ok: false, reason: 'minted for a different call' };
  if (parsed.e <= now) return { ok: false, reason: 'expired' };
  return { ok: true, nonce: parsed.n, expiresAt: parsed.e };
}

/** Nonces already answered, kept until they would have expired anyway. */
export class NonceLedger {
  private readonly used = new Map<string, number>();

  /** True the first time a nonce is presented before its expiry; false on every replay. */
  consume(nonce: string, expiresAt: number, now: number): boolean {
    for (const [n, exp] of this.used) if (exp <= now) this.used.delete(n);
    if (this.used.has(nonce)) return false;
    this.used.set(nonce, expiresAt);
    return true;
  }
}
