/**
 * The bridge profile as a client sees it: a real Dovecot behind the profile's front end
 * (src/sandbox/imap/bridge-front.ts), reached with STARTTLS and a pinned certificate, must answer
 * as Proton Mail Bridge's gluon does. Each case names what it imitates; the answers compared are
 * the ones gluon and proton-bridge's connector give (cited in bridge-front.ts).
 */
import net from 'node:net';
import type { PeerCertificate } from 'node:tls';
import { ImapFlow } from 'imapflow';
import type { ImapFlowOptions } from 'imapflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startImapDemo } from '../../src/sandbox/imap-account.js';
import type { ImapDemo } from '../../src/sandbox/imap-account.js';
import { BRIDGE_CAPABILITY, appendMessage, withMailClient } from '../../src/sandbox/imap/index.js';

function viaFront(demo: ImapDemo): ImapFlow {
  const s = demo.server;
  const c = new ImapFlow({
    host: s.host,
    port: demo.proxy?.port ?? 0,
    secure: false,
    doSTARTTLS: true,
    auth: { user: s.user, pass: s.password },
    logger: false,
    tls: {
      ca: [s.certPem],
      checkServerIdentity: (_h: string, cert: PeerCertificate) =>
        cert.fingerprint256.replace(/:/g, '').toLowerCase() === s.certSha256 ? undefined : new Error('pin'),
    },
  } as ImapFlowOptions);
  c.on('error', () => undefined);
  return c;
}

async function session<T>(demo: ImapDemo, work: (c: ImapFlow) => Promise<T>): Promise<T> {
  const c = viaFront(demo);
  await c.connect();
  try {
    return await work(c);
  } finally {
    await c.logout().catch(() => c.close());
  }
}

/**
 * A logged-in plain session on the front end that sends exactly what a test writes (imapflow
 * drops flags PERMANENTFLAGS does not list and turns a NO into `false`); resolves to the tagged
 * answer after the tag, e.g. "NO operation not allowed".
 */
async function rawSession(
  demo: ImapDemo,
): Promise<{ send(command: string): Promise<string>; close(): void }> {
  const socket = net.connect(demo.proxy?.port ?? 0, demo.server.host);
  let buffer = '';
  let waiting: { tag: string; resolve: (answer: string) => void } | undefined;
  const check = (): void => {
    if (!waiting) return;
    const m = new RegExp(`^${waiting.tag} (.*)\r\n`, 'm').exec(buffer);
    if (!m) return;
    buffer = buffer.slice((m.index ?? 0) + m[0].length);
    const done = waiting;
    waiting = undefined;
    done.resolve(m[1] ?? '');
  };
  socket.on('data', (d: Buffer) => {
    buffer += d.toString('latin1');
    check();
  });
  let n = 0;
  const send = (command: string): Promise<string> =>
    new Promise((resolve) => {
      const tag = `t${++n}`;
      waiting = { tag, resolve };
      socket.write(`${tag} ${command}\r\n`);
    });
  await send(`LOGIN ${demo.server.user} ${demo.server.password}`);
  return { send, close: () => socket.destroy() };
}

async function count(c: ImapFlow, folder: string): Promise<number> {
  const status = await c.status(folder, { messages: true });
  return status ? (status.messages ?? Number.NaN) : Number.NaN;
}

async function uidsOf(c: ImapFlow, folder: string, messageId: string): Promise<number[]> {
  const lock = await c.getMailboxLock(folder, { readOnly: true });
  try {
    return (await c.search({ header: { 'message-id': messageId } }, { uid: true })) || [];
  } finally {
    lock.release();
  }
}

const message = (id: string, subject: string, body = 'hello\r\n', extra = ''): string =>
  `From: Probe <probe@example.com>\r\nTo: you@mailwarden.example\r\nSubject: ${subject}\r\n` +
  `Message-ID: <${id}@example.com>\r\nDate: Mon, 30 Nov 2026 10:00:00 +0000\r\n${extra}\r\n${body}`;

describe('bridge profile front end', () => {
  let demo: ImapDemo;
  beforeAll(async () => {
    demo = await startImapDemo({ profile: 'bridge' });
  });
  afterAll(() => demo?.close());

  it("states gluon's capabilities, PERMANENTFLAGS without \\* or \\Answered, and \\Noselect parents", async () => {
    await session(demo, async (c) => {
      expect([...c.capabilities.keys()].join(' ')).toBe(BRIDGE_CAPABILITY);
      const box = await c.mailboxOpen('INBOX');
      expect([...(box.permanentFlags ?? [])].sort()).toEqual(
        ['$Forwarded', 'Forwarded', '\\Deleted', '\\Flagged', '\\Seen'].sort(),
      );
      const list = await c.list();
      const attrs = (path: string): string[] => [...(list.find((l) => l.path === path)?.flags ?? [])];
      expect(attrs('Folders')).toContain('\\Noselect');
      expect(attrs('Labels')).toContain('\\Noselect');
      expect(attrs('INBOX')).not.toContain('\\Noselect');
    });
  });

  it('keeps a keyword STORE (gluon stores it locally) while PERMANENTFLAGS says it is not permanent', async () => {
    const r = await rawSession(demo);
    try {
      expect(await r.send('SELECT Archive')).toMatch(/^OK/);
      expect(await r.send('STORE 1 +FLAGS (Urgent \\Answered)')).toMatch(/^OK/);
    } finally {
      r.close();
    }
    await session(demo, async (c) => {
      await c.mailboxOpen('Archive', { readOnly: true });
      const m = await c.fetchOne('1', { flags: true });
      expect(m && [...(m.flags ?? [])]).toEqual(expect.arrayContaining(['Urgent', '\\Answered']));
    });
  });

  it('MOVE from INBOX into Labels/X copies: the message stays in INBOX', async () => {
    await appendMessage(demo.server, 'INBOX', message('label-move', 'label me'));
    await session(demo, async (c) => {
      const [uid] = await uidsOf(c, 'INBOX', 'label-move@example.com');
      expect(uid).toBeDefined();
      await c.mailboxOpen('INBOX');
      await c.messageMove(String(uid), 'Labels/Receipts', { uid: true });
      expect(await uidsOf(c, 'INBOX', 'label-move@example.com')).toEqual([uid]);
      expect(await uidsOf(c, 'Labels/Receipts', 'label-move@example.com')).toHaveLength(1);
      // Out of a label into a folder is a real move (the label is removed).
      await c.mailboxOpen('Labels/Receipts');
      const [labelUid] = await uidsOf(c, 'Labels/Receipts', 'label-move@example.com');
      await c.mailboxOpen('Labels/Receipts');
      await c.messageMove(String(labelUid), 'Labels/Travel', { uid: true });
      expect(await uidsOf(c, 'Labels/Receipts', 'label-move@example.com')).toEqual([]);
      expect(await uidsOf(c, 'Labels/Travel', 'label-move@example.com')).toHaveLength(1);
    });
  });

  it('refuses MOVE between INBOX and Sent and any write into or out of All Mail with "operation not allowed"', async () => {
    await appendMessage(demo.server, 'INBOX', message('refused-move', 'stay'));
    const [uid, inAll] = await session(demo, async (c) => [
      (await uidsOf(c, 'INBOX', 'refused-move@example.com'))[0],
      (await uidsOf(c, 'All Mail', 'refused-move@example.com'))[0],
    ]);
    expect(uid).toBeDefined();
    expect(inAll).toBeDefined();
    const r = await rawSession(demo);
    try {
      expect(await r.send('SELECT INBOX')).toMatch(/^OK/);
      expect(await r.send(`UID MOVE ${uid} Sent`)).toBe('NO operation not allowed');
      expect(await r.send(`UID COPY ${uid} "All Mail"`)).toBe('NO operation not allowed');
      expect(await r.send('APPEND "All Mail" {10+}\r\nSubject: x')).toBe('NO operation not allowed');
      expect(await r.send('SELECT "All Mail"')).toMatch(/^OK/);
      expect(await r.send(`UID MOVE ${inAll} Archive`)).toBe('NO operation not allowed');
      expect(await r.send(`UID STORE ${inAll} +FLAGS.SILENT (\\Deleted)`)).toMatch(/^OK/);
      expect(await r.send(`UID EXPUNGE ${inAll}`)).toBe('NO operation not allowed');
      expect(await r.send('EXPUNGE')).toBe('NO operation not allowed');
      // Copying out of All Mail adds a label, as AddMessagesToMailbox allows.
      expect(await r.send(`UID COPY ${inAll} Labels/Family`)).toMatch(/^OK/);
    } finally {
      r.close();
    }
    await session(demo, async (c) => {
      expect(await uidsOf(c, 'INBOX', 'refused-move@example.com')).toEqual([uid]);
      expect(await uidsOf(c, 'Sent', 'refused-move@example.com')).toEqual([]);
      expect(await uidsOf(c, 'Labels/Family', 'refused-move@example.com')).toHaveLength(1);
    });
    const texts = demo.proxy?.commands().map((c) => `${c.text} => ${c.answer ?? ''}`) ?? [];
    expect(texts.some((t) => /UID MOVE \d+ Sent => NO operation not allowed$/.test(t))).toBe(true);
  });

  it("creates mailboxes only as Folders/… or Labels/<one name>, with gluon's answers", async () => {
    await session(demo, async (c) => {
      const answer = (p: Promise<unknown>): Promise<string> =>
        p.then(
          () => 'created',
          (e: unknown) => (e as { responseText?: string }).responseText ?? String(e),
        );
      expect(await answer(c.mailboxCreate('Labels/Audit/Probe'))).toBe(
        'a label cannot have children: operation not allowed',
      );
      expect(await answer(c.mailboxCreate('Probe'))).toBe(
        'invalid mailbox name ["Probe"]: operation not allowed',
      );
      expect(await answer(c.mailboxCreate('Labels/Probe'))).toBe('created');
      expect(await answer(c.mailboxCreate('Folders/Clients/Acme'))).toBe('created');
      const paths = (await c.list()).map((l) => l.path);
      expect(paths).toEqual(expect.arrayContaining(['Labels/Probe', 'Folders/Clients/Acme']));
      expect(paths).not.toContain('Labels/Audit/Probe');
      expect(paths).not.toContain('Probe');
    });
  });

  it('serves every message with an X-Pm-Gluon-Id header, one id per message across its copies', async () => {
    await session(demo, async (c) => {
      await c.mailboxOpen('INBOX');
      const appended = await c.append('INBOX', message('gluon-id', 'id please'));
      const m = await c.fetchOne(
        String(appended && appended.uid),
        { source: true, size: true },
        { uid: true },
      );
      const source = m ? (m.source ?? Buffer.alloc(0)).toString('latin1') : '';
      expect(source).toMatch(/^X-Pm-Gluon-Id: [0-9a-f-]{36}\r\nFrom: Probe/);
      expect(m && m.size).toBe(Buffer.byteLength(source, 'latin1'));

      // A seeded message with a label: the INBOX copy and the label copy carry the same id.
      const ids = async (folder: string): Promise<Map<string, string>> => {
        await c.mailboxOpen(folder, { readOnly: true });
        const out = new Map<string, string>();
        for await (const f of c.fetch('1:*', { headers: ['message-id', 'x-pm-gluon-id'] })) {
          const h = (f.headers ?? Buffer.alloc(0)).toString('latin1');
          const mid = /message-id:\s*(\S+)/i.exec(h)?.[1];
          const gid = /x-pm-gluon-id:\s*(\S+)/i.exec(h)?.[1];
          if (mid && gid) out.set(mid, gid);
        }
        return out;
      };
      const inbox = await ids('INBOX');
      const label = await ids('Labels/Receipts');
      const shared = [...label.keys()].filter((k) => inbox.has(k));
      expect(shared.length).toBeGreaterThan(0);
      for (const k of shared) expect(label.get(k)).toBe(inbox.get(k));
    });
  });

  it('matches SEARCH text and header keys on raw bytes: encoded words and base64 bodies never match', async () => {
    const b64 = Buffer.from('Grüße aus Zürich, the quarterly figures\r\n', 'utf8').toString('base64');
    const encoded = `=?UTF-8?B?${Buffer.from('Zürich offsite', 'utf8').toString('base64')}?=`;
    await appendMessage(demo.server, 'Archive', message('enc-subject', encoded));
    await appendMessage(
      demo.server,
      'Archive',
      message(
        'b64-body',
        'figures',
        `${b64}\r\n`,
        'Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n',
      ),
    );
    await appendMessage(
      demo.server,
      'Archive',
      message('raw-utf8', Buffer.from('Zürich raw', 'utf8').toString('latin1')),
    );
    const mids = async (c: ImapFlow, query: Parameters<ImapFlow['search']>[0]): Promise<string[]> => {
      const uids = (await c.search(query, { uid: true })) || [];
      if (uids.length === 0) return [];
      const out: string[] = [];
      for await (const f of c.fetch(uids.join(','), { envelope: true }, { uid: true })) {
        if (f.envelope?.messageId) out.push(f.envelope.messageId);
      }
      return out.sort();
    };
    // Dovecot itself (plain port, no front end) decodes, which is what Bridge does not do.
    const direct = await withMailClient(demo.server, async (c) => {
      await c.mailboxOpen('Archive', { readOnly: true });
      return { subject: await mids(c, { subject: 'Zürich' }), body: await mids(c, { body: 'quarterly' }) };
    });
    expect(direct.subject).toContain('<enc-subject@example.com>');
    expect(direct.body).toContain('<b64-body@example.com>');

    await session(demo, async (c) => {
      await c.mailboxOpen('Archive', { readOnly: true });
      expect(await mids(c, { subject: 'Zürich' })).toEqual(['<raw-utf8@example.com>']);
      expect(await mids(c, { body: 'quarterly' })).toEqual([]);
      expect(await mids(c, { subject: 'offsite' })).not.toContain('<enc-subject@example.com>');
      // The raw encoded word itself is what matches, and ASCII words match as anywhere.
      expect(await mids(c, { subject: encoded.slice(10, 20) })).toEqual(['<enc-subject@example.com>']);
      expect(await mids(c, { subject: 'FIGURES' })).toEqual(['<b64-body@example.com>']);
      // Non-text keys still narrow as Dovecot does: OR with a flag, NOT around a text key.
      const all = (await c.search({ all: true }, { uid: true })) || [];
      const notFigures = (await c.search({ not: { subject: 'figures' } }, { uid: true })) || [];
      expect(notFigures.length).toBe(all.length - 1);
      // TEXT reads the whole stored literal, gluon's added header included.
      expect((await mids(c, { text: 'X-Pm-Gluon-Id' })).length).toBe(all.length);
    });
  });

  it('records every command with its answer, and keeps the delay and fault features of the byte proxy', async () => {
    const front = demo.proxy;
    if (!front) throw new Error('bridge demo without front end');
    const from = front.commands().length;
    front.setFaults([{ kind: 'drop', when: /UID STORE .*\\Flagged/ }]);
    const c = viaFront(demo);
    await c.connect();
    await c.mailboxOpen('Trash');
    // The fault cuts the connection after forwarding the STORE: imapflow sees it fail.
    expect(await c.messageFlagsAdd('1', ['\\Flagged'], { uid: true }).catch(() => false)).toBe(false);
    expect(c.usable).toBe(false);
    front.setFaults([]);
    const mine = front.commands().slice(from);
    expect(mine.map((r) => r.text.replace(/^\S+ /, ''))).toEqual(
      expect.arrayContaining(['SELECT Trash', 'UID STORE 1 +FLAGS (\\Flagged)']),
    );
    expect(mine.find((r) => r.text.endsWith('SELECT Trash'))?.answer).toMatch(/^OK \[READ-WRITE\]/);
    expect(front.commandsSeen()).toBe(front.commands().length);
  });
});

describe('bridge profile variants', () => {
  it('without All Mail (Bridge setting) lists no All Mail; All Mail otherwise holds Spam and Trash too', async () => {
    const hidden = await startImapDemo({ profile: 'bridge', bridge: { allMail: false } });
    try {
      const paths = await session(hidden, async (c) => (await c.list()).map((l) => l.path));
      expect(paths).not.toContain('All Mail');
      expect(paths).toEqual(
        expect.arrayContaining(['INBOX', 'Spam', 'Trash', 'Starred', 'Folders', 'Labels']),
      );
    } finally {
      await hidden.close();
    }
    const shown = await startImapDemo({ profile: 'bridge' });
    try {
      await session(shown, async (c) => {
        const parts = ['INBOX', 'Archive', 'Sent', 'Drafts', 'Spam', 'Trash'];
        let sum = 0;
        for (const p of parts) sum += await count(c, p);
        expect(await count(c, 'Spam')).toBeGreaterThan(0);
        expect(await count(c, 'Trash')).toBeGreaterThan(0);
        expect(await count(c, 'All Mail')).toBe(sum);
      });
    } finally {
      await shown.close();
    }
  });

  it('without IDLE neither lists nor accepts it', async () => {
    const demo = await startImapDemo({ profile: 'bridge', bridge: { idle: false } });
    try {
      const caps = await session(demo, async (c) => [...c.capabilities.keys()]);
      expect(caps).not.toContain('IDLE');
      expect(caps.join(' ')).toBe(BRIDGE_CAPABILITY.replace('IDLE ', ''));
      const raw = await import('node:net');
      const answer = await new Promise<string>((resolve, reject) => {
        const sock = raw.connect(demo.proxy?.port ?? 0, demo.server.host);
        let text = '';
        let sent = false;
        sock.on('data', (d: Buffer) => {
          text += d.toString('latin1');
          if (/^a OK/m.test(text) && !sent) {
            sent = true;
            sock.write('b IDLE\r\n');
          }
          const m = /^b (.*)\r\n/m.exec(text);
          if (m) {
            sock.destroy();
            resolve(m[1] ?? '');
          }
        });
        sock.on('error', reject);
        sock.write(`a LOGIN ${demo.server.user} ${demo.server.password}\r\n`);
      });
      expect(answer).toMatch(/^BAD/);
    } finally {
      await demo.close();
    }
  });
});
