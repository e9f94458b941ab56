/**
 * The bridge profile's front end: an IMAP-aware proxy that makes a Dovecot answer the way Proton
 * Mail Bridge's IMAP server (ProtonMail/gluon, driven by proton-bridge's connector) answers. It
 * terminates STARTTLS itself with the profile's certificate (clients still pin it), reads whole
 * commands, refuses or rewrites the ones Bridge treats differently, edits the responses Bridge
 * words differently, holds each command as long as Bridge would, and records every command.
 *
 * Read for this (gluon at 31e040c, 2024-10; proton-bridge at dbef40c, 2025-06):
 * - gluon imap/capabilities.go: IMAP4rev1 STARTTLS IDLE UNSELECT UIDPLUS MOVE ID; before login
 *   only IMAP4rev1 STARTTLS IDLE ID (IsCapabilityAvailableBeforeAuth); internal/session/
 *   handle_capability.go, session.go (STARTTLS stays listed after TLS).
 * - proton-bridge internal/services/imapservice/connector.go:
 *   MoveMessages refuses INBOX→Sent, Sent→INBOX and any move from or to All Mail with
 *   connector.ErrOperationNotAllowed ("operation not allowed"), and removes the message from the
 *   source only when the source is a label or the target a folder or system mailbox: a MOVE from
 *   INBOX into Labels/X is a copy. AddMessagesToMailbox (COPY's target) and CreateMessage (APPEND)
 *   refuse All Mail; RemoveMessagesFromMailbox (EXPUNGE) refuses All Mail and deletes for good
 *   from Trash and Drafts what is in no other folder. CreateMailbox accepts only Folders/… and
 *   Labels/<one name> ("a label cannot have children"). defaultMailboxFlags and
 *   defaultMailboxPermanentFlags: \Seen \Flagged \Deleted $Forwarded Forwarded — no \Answered,
 *   no \*. GetMailboxVisibility hides All Mail when the user turns it off. imap_updates.go makes
 *   the Folders and Labels parents \Noselect.
 * - gluon internal/session/errors.go, internal/response/no.go: a refusal is `tag NO <error>`.
 * - gluon internal/state/updates.go applyMessageFlagsAdded: a flag Proton has no field for (a
 *   keyword, \Answered) is still stored, in gluon's local database only, so STORE answers OK.
 * - gluon internal/ids/header.go, rfc822/header.go Set, internal/state/actions.go: every message
 *   gluon stores gets an `X-Pm-Gluon-Id: <internal id>` field prepended, so it is in BODY[],
 *   BODY[HEADER], RFC822.SIZE and TEXT search. This profile writes it into the stored message
 *   (seed.ts for seeded mail, APPEND here), so Dovecot serves it everywhere gluon does.
 * - gluon internal/state/mailbox_search.go: SEARCH reads each message's literal (downloaded from
 *   Proton when not cached) for text and header keys and matches raw bytes (bridge-search.ts);
 *   STATUS of a mailbox that is not selected reads every message row of it. Both cost grows with
 *   the folder: modelled as base + per-message delays (off by default).
 *
 * Commands are served one at a time per connection, as a gluon session does, each held `delayMs`
 * once it is its turn: wall time is about commands × delay.
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import { findTextKeys, matchesRaw, uidSet } from './bridge-search.js';
import { bridgeCapability, FOLDERS } from './dovecot-config.js';
import type { DovecotServer } from './dovecot.js';
import type { ProxyFault } from './proxy.js';
import { serialize, tokenize, tokenValue, untokenize, UnitReader, unitText } from './wire.js';
import type { Token, Unit } from './wire.js';

export const GLUON_ID_HEADER = 'X-Pm-Gluon-Id';

/** The message with gluon's id field first and any id field it carried removed. */
export function withGluonId(raw: Buffer, id: string = randomUUID()): Buffer {
  const text = raw.toString('latin1').replace(/^X-Pm-Gluon-Id:[^\r\n]*\r?\n/gim, '');
  return Buffer.from(`${GLUON_ID_HEADER}: ${id}\r\n${text}`, 'latin1');
}

export interface SizeDelay {
  baseMs?: number;
  perMessageMs?: number;
}

export interface BridgeFrontOptions {
  server: DovecotServer;
  delayMs?: number;
  faults?: ProxyFault[];
  /** STATUS of a mailbox the connection has not selected. */
  statusDelay?: SizeDelay;
  /** SEARCH with a text or header key: the selected mailbox is read in full. */
  searchDelay?: SizeDelay;
}

export interface RecordedCommand {
  connection: number;
  /** The command as the client sent it (literals inline, latin1), without the final CRLF. */
  text: string;
  /** The tagged answer the client got ("OK …", "NO …", "BAD …"), once it came. */
  answer?: string;
}

export interface BridgeFront {
  host: '127.0.0.1';
  port: number;
  /** Commands received so far, over all connections (IDLE's DONE is not one). */
  commandsSeen(): number;
  /** Bytes sent to clients so far, over all connections, after TLS is taken off (what the client downloads). */
  bytesToClients(): number;
  /** Every command so far, in arrival order, with its tagged answer. */
  commands(): RecordedCommand[];
  setDelay(ms: number): void;
  setFaults(faults: ProxyFault[]): void;
  setSizeDelays(delays: { status?: SizeDelay; search?: SizeDelay }): void;
  stop(): Promise<void>;
}

const GLUON_FLAGS = '(\\Seen \\Flagged \\Deleted $Forwarded Forwarded)';
const NOT_ALLOWED = 'operation not allowed';
const BEFORE_AUTH = new Set(['IMAP4rev1', 'STARTTLS', 'IDLE', 'ID']);
/** The ID answer of Bridge's IMAP server (the version info proton-bridge hands gluon). */
const BRIDGE_ID =
  '("name" "Proton Mail Bridge" "version" "3.21.2" "os" "linux" "vendor" "Proton AG" "support-url" "https://proton.me/support/bridge")';

const isInbox = (name: string | undefined): boolean => name?.toUpperCase() === 'INBOX';

interface Queued {
  unit: Unit;
  record: RecordedCommand;
  fault: ProxyFault | undefined;
}

export async function startBridgeFront(options: BridgeFrontOptions): Promise<BridgeFront> {
  const { server } = options;
  const layout = FOLDERS.bridge;
  const allMail = server.bridge.allMail === false ? undefined : layout.all;
  const idle = server.bridge.idle !== false;
  const capsAfter = bridgeCapability(server.bridge).split(' ');
  const capsBefore = capsAfter.filter((c) => BEFORE_AUTH.has(c));
  let delayMs = options.delayMs ?? 0;
  let statusDelay = options.statusDelay ?? {};
  let searchDelay = options.searchDelay ?? {};
  let faults: Array<{ fault: ProxyFault; spent: boolean }> = [];
  const setFaults = (list: ProxyFault[]): void => {
    faults = list.map((fault) => ({ fault, spent: false }));
  };
  setFaults(options.faults ?? []);
  const recorded: RecordedCommand[] = [];
  let sentBytes = 0;
  const rawCache = new Map<string, Buffer>();
  const closers = new Set<() => void>();
  /** Mailboxes a client unsubscribed (gluon subscribes every mailbox it creates). */
  const unsubscribed = new Set<string>();
  let connections = 0;

  const claim = (text: string): ProxyFault | undefined => {
    for (const entry of faults) {
      if (entry.spent || !entry.fault.when.test(text)) continue;
      if (!entry.fault.repeat) entry.spent = true;
      return entry.fault;
    }
    return undefined;
  };

  const onConnection = (raw: net.Socket): void => {
    const id = ++connections;
    let client: net.Socket = raw;
    const upstream = net.connect(server.plainPort, server.host);
    let closed = false;
    let hung = false;
    let secure = false;
    let authed = false;
    let selected: string | undefined;
    let uidValidity = '';
    let idling = false;
    let cutAfter: number | undefined;
    const queue: Queued[] = [];
    let current: { tag: string; record: RecordedCommand; after?: (answer: string) => void } | undefined;
    let internal:
      | {
          tag: string;
          units: Unit[];
          done: (answer: string, units: Unit[]) => void;
          keep: (u: Unit) => boolean;
        }
      | undefined;
    let internalSeq = 0;
    let timer: NodeJS.Timeout | undefined;

    const close = (): void => {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      queue.length = 0;
      client.destroy();
      raw.destroy();
      upstream.destroy();
      closers.delete(close);
    };
    closers.add(close);

    const toClient = (data: Buffer | string): void => {
      if (closed || hung) return;
      const bytes = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
      sentBytes += bytes.length;
      if (cutAfter === undefined) {
        client.write(bytes);
        return;
      }
      if (bytes.length < cutAfter) {
        cutAfter -= bytes.length;
        client.write(bytes);
        return;
      }
      const part = bytes.subarray(0, cutAfter);
      cutAfter = undefined;
      if (part.length === 0) close();
      else client.write(part, () => close());
    };

    // gluon greets and answers LOGIN with its whole list, and filters only CAPABILITY before
    // login (session.go greet, handle_login.go, handle_capability.go getCaps).
    let greeted = false;
    const caps = (): string => (authed || !greeted ? capsAfter : capsBefore).join(' ');

    /** gluon's wording of what Dovecot says differently. */
    const rewrite = (line: string): string => {
      let out = line
        .replace(/^\* CAPABILITY .*$/i, () => `* CAPABILITY ${caps()}`)
        .replace(/\[CAPABILITY [^\]]*\]/i, () => `[CAPABILITY ${caps()}]`)
        .replace(/^\* FLAGS \(.*\)$/i, `* FLAGS ${GLUON_FLAGS}`)
        .replace(/\[PERMANENTFLAGS \([^)]*\)\]/i, `[PERMANENTFLAGS ${GLUON_FLAGS}]`);
      const validity = /\[UIDVALIDITY (\d+)\]/i.exec(out);
      if (validity?.[1]) uidValidity = validity[1];
      const list = /^\* (LIST|LSUB) \(([^)]*)\) (\S+) (.+)$/i.exec(out);
      if (list) {
        const name = list[4]?.replace(/^"(.*)"$/, '$1');
        if (name === layout.foldersRoot || name === layout.labelsRoot) {
          const attrs = (list[2] ?? '').split(' ').filter((a) => a && !/^\\Noselect$/i.test(a));
          out = `* ${list[1]} (${['\\Noselect', ...attrs].join(' ')}) ${list[3]} ${list[4]}`;
        }
      }
      return out;
    };

    const relay = (unit: Unit): void => {
      const [first, ...rest] = unit.lines;
      toClient(serialize({ lines: [rewrite(first ?? ''), ...rest], literals: unit.literals }));
    };

    /** A command of the front end's own on this connection's session; its untagged data kept. */
    const ask = (text: string, keep: (u: Unit) => boolean): Promise<{ answer: string; units: Unit[] }> =>
      new Promise((resolve) => {
        const tag = `bf${++internalSeq}`;
        internal = { tag, units: [], keep, done: (answer, units) => resolve({ answer, units }) };
        upstream.write(`${tag} ${text}\r\n`);
      });

    const onUpstream = (unit: Unit): void => {
      const first = unit.lines[0] ?? '';
      if (internal) {
        if (first.startsWith(`${internal.tag} `)) {
          const done = internal;
          internal = undefined;
          done.done(first.slice(done.tag.length + 1), done.units);
          return;
        }
        if (first.startsWith('* ') && internal.keep(unit)) {
          internal.units.push(unit);
          return;
        }
      }
      if (current && first.startsWith(`${current.tag} `)) {
        const answer = first.slice(current.tag.length + 1);
        const done = current;
        current = undefined;
        done.record.answer = answer;
        const wasAuthed = authed;
        done.after?.(answer);
        if (authed && !wasAuthed && !/\[CAPABILITY /i.test(first)) {
          unit.lines[0] = `${done.tag} OK [CAPABILITY ${caps()}] ${answer.replace(/^OK ?/i, '')}`;
        }
        relay(unit);
        pump();
        return;
      }
      relay(unit);
      greeted = true;
    };

    const answerLocally = (q: Queued, tag: string, answer: string): void => {
      q.record.answer = answer;
      toClient(`${tag} ${answer}\r\n`);
    };

    const forward = (q: Queued, unit: Unit, tag: string, after?: (answer: string) => void): void => {
      current = { tag, record: q.record, ...(after ? { after } : {}) };
      const fault = q.fault;
      const bytes = serialize(unit, true);
      if (!fault) {
        upstream.write(bytes);
        return;
      }
      switch (fault.kind) {
        case 'drop':
          if (fault.after === 'before') close();
          else upstream.write(bytes, () => close());
          return;
        case 'drop-midresponse':
          cutAfter = Math.max(0, fault.afterBytes);
          upstream.write(bytes);
          return;
        case 'hang':
          hung = true;
          queue.length = 0;
          return;
      }
    };

    const wait = (ms: number): Promise<void> =>
      ms > 0 ? new Promise((resolve) => (timer = setTimeout(resolve, ms))) : Promise.resolve();

    const sizeWait = (d: SizeDelay, messages: number): Promise<void> =>
      wait((d.baseMs ?? 0) + (d.perMessageMs ?? 0) * messages);

    /** SEARCH with text or header keys: those keys become the UID sets gluon's raw match gives. */
    const rawSearch = async (tokens: Token[], criteriaFrom: number): Promise<Unit | undefined> => {
      const keys = findTextKeys(tokens, criteriaFrom);
      if (keys.length === 0) return undefined;
      // gluon reads every literal; the front end reads what the keys need, once per UID (a UID's
      // bytes never change), so a test run does not pay gluon's cost on every header search.
      const part = keys.some((k) => k.key !== 'HEADER') ? 'BODY.PEEK[]' : 'BODY.PEEK[HEADER]';
      const found = await ask('UID SEARCH ALL', (u) => /^\* SEARCH/i.test(u.lines[0] ?? ''));
      const uids = (found.units[0]?.lines[0] ?? '').split(' ').slice(2).map(Number).filter(Boolean);
      const cacheKey = (uid: number): string =>
        `${selected ?? ''}\u0000${uidValidity}\u0000${part}\u0000${uid}`;
      const missing = uids.filter((uid) => !rawCache.has(cacheKey(uid)));
      if (missing.length > 0) {
        const { units } = await ask(`UID FETCH ${uidSet(missing)} (UID ${part})`, (u) =>
          /FETCH \(/i.test(u.lines[0] ?? ''),
        );
        for (const u of units) {
          const uid = /UID (\d+)/i.exec(u.lines.join(' '));
          const body = u.literals[0];
          if (uid && body) rawCache.set(cacheKey(Number(uid[1])), body);
        }
      }
      const messages = uids.flatMap((uid) => {
        const body = rawCache.get(cacheKey(uid));
        return body ? [{ uid, body }] : [];
      });
      await sizeWait(searchDelay, messages.length);
      const out = [...tokens];
      for (const key of [...keys].reverse()) {
        const hits = messages.filter((m) => matchesRaw(m.body, key)).map((m) => m.uid);
        const replacement: Token[] =
          hits.length === 0
            ? [
                { t: 'atom', v: 'NOT' },
                { t: 'atom', v: 'ALL' },
              ]
            : [
                { t: 'atom', v: 'UID' },
                { t: 'atom', v: uidSet(hits) },
              ];
        out.splice(key.at, key.span, ...replacement);
      }
      return untokenize(out);
    };

    const serve = async (q: Queued): Promise<void> => {
      const tokens = tokenize(q.unit);
      const tag = tokenValue(tokens[0]) ?? '*';
      let verb = (tokenValue(tokens[1]) ?? '').toUpperCase();
      let argsAt = 2;
      if (verb === 'UID') {
        verb = `UID ${(tokenValue(tokens[2]) ?? '').toUpperCase()}`;
        argsAt = 3;
      }
      const arg = (k: number): string | undefined => tokenValue(tokens[argsAt + k]);
      await wait(delayMs);
      if (closed || hung) return;
      switch (verb) {
        case 'STARTTLS': {
          if (secure) return answerLocally(q, tag, 'BAD TLS is unavailable');
          answerLocally(q, tag, 'OK Begin TLS negotiation now');
          raw.removeListener('data', onClientData);
          // Bytes a client sent after STARTTLS but before the handshake are dropped (RFC 3501
          // §6.2.1: a server must not act on them).
          reader = new UnitReader(continuation);
          const wrapped = new tls.TLSSocket(raw, {
            isServer: true,
            cert: server.certPem,
            key: server.keyPem,
          });
          wrapped.on('data', onClientData);
          wrapped.on('error', close);
          wrapped.on('close', close);
          client = wrapped;
          secure = true;
          return;
        }
        case 'ID':
          // gluon answers ID itself, with its own version info (name, version, os, vendor,
          // support-url), before and after login alike: internal/session/handle_id.go,
          // imap/id.go (NewIMAPIDFromVersionInfo). A client that judges the server by its ID
          // answer (imapflow asks again after login when the first answer had under two keys)
          // sees what it would see from Bridge.
          toClient(`* ID ${BRIDGE_ID}\r\n`);
          return answerLocally(q, tag, 'OK ID');
        case 'AUTHENTICATE':
          // gluon has no AUTHENTICATE (and lists no AUTH=): its parser refuses the word.
          return answerLocally(q, tag, 'BAD unknown command');
        case 'IDLE':
          if (!idle) return answerLocally(q, tag, 'BAD unknown command');
          idling = true;
          return forward(q, q.unit, tag, () => (idling = false));
        case 'LOGIN':
          return forward(q, q.unit, tag, (answer) => {
            if (/^OK/i.test(answer)) authed = true;
          });
        case 'SELECT':
        case 'EXAMINE': {
          const name = arg(0);
          return forward(q, q.unit, tag, (answer) => {
            selected = /^OK/i.test(answer) ? name : undefined;
          });
        }
        case 'CLOSE':
        case 'UNSELECT':
          return forward(q, q.unit, tag, (answer) => {
            if (/^OK/i.test(answer)) selected = undefined;
          });
        case 'CREATE': {
          const parts = (arg(0) ?? '').split('/');
          if (parts.length < 2 || (parts[0] !== layout.foldersRoot && parts[0] !== layout.labelsRoot)) {
            return answerLocally(q, tag, `NO invalid mailbox name ${JSON.stringify(parts)}: ${NOT_ALLOWED}`);
          }
          if (parts[0] === layout.labelsRoot && parts.length > 2) {
            return answerLocally(q, tag, `NO a label cannot have children: ${NOT_ALLOWED}`);
          }
          return forward(q, q.unit, tag);
        }
        // gluon creates every mailbox subscribed and answers NO to a SUBSCRIBE of a subscribed
        // one (internal/db_impl/sqlite3/write_ops.go sets Subscribed on create;
        // internal/state/state.go Subscribe returns ErrAlreadySubscribed). Dovecot keeps its own
        // subscriptions, so the front keeps the names a client unsubscribed.
        case 'SUBSCRIBE': {
          const name = arg(0) ?? '';
          if (!unsubscribed.has(name)) return answerLocally(q, tag, 'NO already subscribed to this mailbox');
          return forward(q, q.unit, tag, (answer) => {
            if (/^OK/i.test(answer)) unsubscribed.delete(name);
          });
        }
        case 'UNSUBSCRIBE': {
          const name = arg(0) ?? '';
          return forward(q, q.unit, tag, (answer) => {
            if (/^OK/i.test(answer)) unsubscribed.add(name);
          });
        }
        case 'APPEND': {
          if (arg(0) === allMail) return answerLocally(q, tag, `NO ${NOT_ALLOWED}`);
          const last = q.unit.literals.length - 1;
          const message = q.unit.literals[last];
          if (!message) return forward(q, q.unit, tag);
          const literals = [...q.unit.literals];
          literals[last] = withGluonId(message);
          return forward(q, { lines: q.unit.lines, literals }, tag);
        }
        case 'COPY':
        case 'UID COPY':
          if (allMail !== undefined && arg(1) === allMail) return answerLocally(q, tag, `NO ${NOT_ALLOWED}`);
          return forward(q, q.unit, tag);
        case 'MOVE':
        case 'UID MOVE': {
          const target = arg(1);
          const inboxSent =
            (isInbox(selected) && target === layout.sent) || (selected === layout.sent && isInbox(target));
          if (inboxSent || (allMail !== undefined && (selected === allMail || target === allMail))) {
            return answerLocally(q, tag, `NO ${NOT_ALLOWED}`);
          }
          const label = (name: string | undefined): boolean =>
            name?.startsWith(`${layout.labelsRoot}/`) === true;
          if (label(target) && !label(selected)) {
            // Into a label from anything but a label: Proton adds the label and keeps the message.
            const copy = [...tokens];
            copy[argsAt - 1] = { t: 'atom', v: 'COPY' };
            return forward(q, untokenize(copy), tag);
          }
          return forward(q, q.unit, tag);
        }
        case 'EXPUNGE':
        case 'UID EXPUNGE':
          if (allMail !== undefined && selected === allMail)
            return answerLocally(q, tag, `NO ${NOT_ALLOWED}`);
          return forward(q, q.unit, tag);
        case 'STATUS': {
          const name = arg(0);
          const cost = (statusDelay.baseMs ?? 0) + (statusDelay.perMessageMs ?? 0);
          if (cost > 0 && name !== undefined && name !== selected) {
            const quoted = `"${name.replace(/[\\"]/g, (m) => `\\${m}`)}"`;
            const { units } = await ask(`STATUS ${quoted} (MESSAGES)`, (u) =>
              /^\* STATUS /i.test(u.lines[0] ?? ''),
            );
            const n = Number(/MESSAGES (\d+)/i.exec(units[0]?.lines.join(' ') ?? '')?.[1] ?? 0);
            await sizeWait(statusDelay, n);
          }
          return forward(q, q.unit, tag);
        }
        case 'SEARCH':
        case 'UID SEARCH': {
          const rewritten = selected === undefined ? undefined : await rawSearch(tokens, argsAt);
          return forward(q, rewritten ?? q.unit, tag);
        }
        default:
          return forward(q, q.unit, tag);
      }
    };

    const pump = (): void => {
      if (current || closed || hung) return;
      const next = queue.shift();
      if (!next) return;
      // A placeholder until serve() forwards or answers, so the next command waits its turn.
      const slot = { tag: '\u0000', record: next.record };
      current = slot;
      void serve(next).then(
        () => {
          if (current === slot) {
            current = undefined;
            pump();
          }
        },
        () => close(),
      );
    };

    const continuation = (): void => toClient('+ Ready\r\n');
    let reader = new UnitReader(continuation);

    function onClientData(chunk: Buffer): void {
      if (closed || hung) return;
      for (const unit of reader.push(chunk)) {
        if (idling && /^DONE$/i.test(unit.lines[0] ?? '')) {
          upstream.write(serialize(unit));
          continue;
        }
        const text = unitText(unit).replace(/\r\n$/, '');
        const record: RecordedCommand = { connection: id, text };
        recorded.push(record);
        queue.push({ unit, record, fault: claim(text) });
      }
      pump();
    }

    const upstreamReader = new UnitReader();
    upstream.on('data', (chunk: Buffer) => {
      if (closed || hung) return;
      for (const unit of upstreamReader.push(chunk)) onUpstream(unit);
    });
    raw.on('data', onClientData);
    for (const s of [raw, upstream]) {
      s.on('error', close);
      s.on('close', close);
    }
  };

  const listener = net.createServer(onConnection);
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (listener.address() as net.AddressInfo).port;

  return {
    host: '127.0.0.1',
    port,
    commandsSeen: () => recorded.length,
    bytesToClients: () => sentBytes,
    commands: () => recorded.map((r) => ({ ...r })),
    setDelay(ms: number): void {
      delayMs = Math.max(0, ms);
    },
    setFaults,
    setSizeDelays(delays): void {
      if (delays.status) statusDelay = delays.status;
      if (delays.search) searchDelay = delays.search;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const close of [...closers]) close();
        listener.close(() => resolve());
      }),
  };
}
