import { invalidInput } from '../../mail/errors.js';

/*
 * Message and thread ids for IMAP accounts. They must stay valid when a message moves between
 * folders (another client archives a thread) and must not need a local index (docs/architecture.md, promise 2),
 * so they are derived from the message itself:
 *
 * - message id "m" + base64url(Message-ID without <>): the same in every folder, and reversible,
 *   so the message is found again by `SEARCH HEADER Message-ID`.
 * - thread id "t" + base64url(root Message-ID), the root being the first entry of References,
 *   else In-Reply-To, else the message's own Message-ID (RFC 5322 §3.6.4: References starts with
 *   the thread's first message). Every reply names the root, so the thread is found again by
 *   `SEARCH HEADER References root` in any folder.
 * - a message without a usable Message-ID has only its place: "u" + base64url(path, UIDVALIDITY,
 *   UID). Such an id does not survive a move (docs/imap.md says so); its thread is itself.
 *
 * Message-IDs longer than MAX_MSGID bytes are treated as absent so every id fits the tools'
 * 256-character id limit.
 */

const MAX_MSGID = 180;

export type ImapId =
  | { kind: 'message'; messageId: string }
  | { kind: 'thread'; messageId: string }
  | { kind: 'place'; path: string; uidValidity: string; uid: number; thread: boolean };

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64url');

/** The id inside <>, trimmed; undefined when there is none or it is unusable. */
export function cleanMessageId(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const m = /<([^<>\s]+)>/.exec(value) ?? /^\s*([^<>\s]+)\s*$/.exec(value);
  const id = m?.[1];
  if (id === undefined || id === '' || Buffer.byteLength(id, 'utf8') > MAX_MSGID) return undefined;
  return id;
}

/** Every <id> of a References / In-Reply-To value, in order. */
export function referenceIds(value: string | undefined): string[] {
  if (value === undefined) return [];
  const out: string[] = [];
  for (const m of value.matchAll(/<([^<>\s]+)>/g)) {
    const id = m[1];
    if (id !== undefined && Buffer.byteLength(id, 'utf8') <= MAX_MSGID) out.push(id);
  }
  return out;
}

export interface PlaceRef {
  path: string;
  uidValidity: string;
  uid: number;
}

export function messageIdFor(messageId: string | undefined, place: PlaceRef): string {
  return messageId === undefined ? placeId('u', place) : `m${b64(messageId)}`;
}

export function threadIdFor(root: string | undefined, place: PlaceRef): string {
  return root === undefined ? placeId('v', place) : `t${b64(root)}`;
}

/** The thread root of a message: first References id, else In-Reply-To, else its own id. */
export function threadRoot(headers: {
  messageId?: string | undefined;
  references?: string | undefined;
  inReplyTo?: string | undefined;
}): string | undefined {
  return (
    referenceIds(headers.references)[0] ??
    referenceIds(headers.inReplyTo)[0] ??
    cleanMessageId(headers.messageId)
  );
}

function placeId(prefix: 'u' | 'v', p: PlaceRef): string {
  return `${prefix}${b64(`${p.path}\n${p.uidValidity}\n${p.uid}`)}`;
}

/** Parses an id a tool was given; a malformed one is invalid_input naming the field. */
export function parseImapId(value: string, field: string): ImapId {
  const fail = () =>
    invalidInput(field, `"${value.slice(0, 40)}" is not an id from this IMAP account (search or get_thread)`);
  const kind = value[0];
  const body = value.slice(1);
  if (!/^[A-Za-z0-9_-]+$/.test(body)) throw fail();
  const text = Buffer.from(body, 'base64url').toString('utf8');
  if (b64(text) !== body) throw fail();
  if (kind === 'm' || kind === 't') {
    if (cleanMessageId(`<${text}>`) !== text) throw fail();
    return { kind: kind === 'm' ? 'message' : 'thread', messageId: text };
  }
  if (kind === 'u' || kind === 'v') {
    const [path, uidValidity, uidText] = text.split('\n');
    const uid = Number(uidText);
    if (path === undefined || uidValidity === undefined || !Number.isInteger(uid) || uid < 1) throw fail();
    return { kind: 'place', path, uidValidity, uid, thread: kind === 'v' };
  }
  throw fail();
}
