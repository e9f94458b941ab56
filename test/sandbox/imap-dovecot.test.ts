/**
 * The throwaway Dovecot servers, the fault proxy and the seeding, checked with a real imapflow
 * client: what a provider test relies on must be true of the server, not of our config text.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import net from 'node:net';
import type { PeerCertificate } from 'node:tls';
import tls from 'node:tls';
import { ImapFlow } from 'imapflow';
import type { ImapFlowOptions } from 'imapflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCorpus } from '../../src/sandbox/corpus/index.js';
import {
  BRIDGE_CAPABILITY,
  appendMessage,
  keywordForLabel,
  processGroupAlive,
  recreateMailbox,
  seedDovecot,
  startDovecot,
  startImapProxy,
} from '../../src/sandbox/imap/index.js';
import { guard } from '../../src/sandbox/imap/process.js';
import type { DovecotServer, SeedReport } from '../../src/sandbox/imap/index.js';
import { tempDir } from '../helpers/temp.js';

const pin = (s: DovecotServer): tls.ConnectionOptions => ({
  ca: [s.certPem],
  checkServerIdentity: (_host: string, cert: PeerCertificate) =>
    cert.fingerprint256.replace(/:/g, '').toLowerCase() === s.certSha256 ? undefined : new Error('pin'),
});

function client(s: DovecotServer, how: 'tls' | 'starttls' | 'plain', extra: Partial<ImapFlowOptions> = {}) {
  const c = new ImapFlow({
    host: s.host,
    port: how === 'tls' ? s.tlsPort : s.plainPort,
    secure: how === 'tls',
    doSTARTTLS: how === 'starttls' ? true : how === 'plain' ? false : undefined,
    auth: { user: s.user, pass: s.password },
    logger: false,
    tls: pin(s),
    ...extra,
  } as ImapFlowOptions);
  c.on('error', () => undefined);
  return c;
}

async function session<T>(c: ImapFlow, work: (c: ImapFlow) => Promise<T>): Promise<T> {
  await c.connect();
  try {
    return await work(c);
  } finally {
    await c.logout().catch(() => c.close());
  }
}

/** Pre-login CAPABILITY over a raw socket (imapflow only keeps the post-login list). */
async function preLoginCaps(s: DovecotServer, mode: 'plain' | 'tls' | 'starttls'): Promise<string> {
  let socket: net.Socket =
    mode === 'tls'
      ? tls.connect({ host: s.host, port: s.tlsPort, ...pin(s) })
      : net.connect(s.plainPort, s.host);
  let buffer = '';
  let waiter: (() => void) | undefined;
  const onData = (d: Buffer): void => {
    buffer += d.toString('latin1');
    waiter?.();
  };
  socket.on('data', onData);
  const until = (re: RegExp): Promise<string> =>
    new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`timeout waiting for ${re}: ${buffer}`)), 5000);
      const check = (): void => {
        const m = re.exec(buffer);
        if (!m) return;
        clearTimeout(t);
        waiter = undefined;
        buffer = buffer.slice(m.index + m[0].length);
        resolve(m[0]);
      };
      waiter = check;
      check();
    });
  await until(/^\* OK[^\r]*\r\n/m);
  if (mode === 'starttls') {
    socket.write('s STARTTLS\r\n');
    await until(/^s OK[^\r]*\r\n/m);
    socket.off('data', onData);
    socket = tls.connect({ socket, ...pin(s) });
    socket.on('data', onData);
    await new Promise((r) => socket.once('secureConnect', r));
  }
  socket.write('c CAPABILITY\r\n');
  const line = await until(/^\* CAPABILITY [^\r]*\r\n/m);
  socket.destroy();
  return line.replace(/^\* CAPABILITY /, '').trim();
}

/** What seeding must produce, worked out from the corpus labels here, not by seed.ts. */
function expectedCounts(profile: 'full' | 'bridge'): {
  folders: Record<string, number>;
  seenInbox: number;
  labelsInInbox: Record<string, number>;
} {
  const user = demoCorpus();
  const name = new Map(user.userLabels.map((l) => [l.id, l.name]));
  const folders: Record<string, number> = {};
  const add = (f: string): void => void (folders[f] = (folders[f] ?? 0) + 1);
  let seenInbox = 0;
  const labelsInInbox: Record<string, number> = {};
  for (const m of user.threads.flatMap((t) => t.messages)) {
    const l = new Set(m.labelIds);
    let home: string[];
    if (l.has('TRASH')) home = ['Trash'];
    else if (l.has('SPAM')) home = [profile === 'full' ? 'Junk' : 'Spam'];
    else if (l.has('DRAFT')) home = ['Drafts'];
    else if (l.has('INBOX')) home = l.has('SENT') ? ['INBOX', 'Sent'] : ['INBOX'];
    else if (l.has('SENT')) home = ['Sent'];
    else home = ['Archive'];
    home.forEach(add);
    if (home[0] === 'INBOX' && !l.has('UNREAD')) seenInbox++;
    for (const id of l) {
      const label = name.get(id);
      if (label && home[0] === 'INBOX') labelsInInbox[label] = (labelsInInbox[label] ?? 0) + 1;
    }
    if (profile === 'bridge') for (const id of l) if (name.has(id)) add(`Labels/${name.get(id)}`);
  }
  return { folders, seenInbox, labelsInInbox };
}

async function count(c: ImapFlow, folder: string): Promise<number | undefined> {
  const status = await c.status(folder, { messages: true });
  return status ? status.messages : undefined;
}

/** Processes whose command line names `text` (the dovecot master and the watchdog name the dir). */
function processesMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        return readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const specialUse = async (c: ImapFlow): Promise<Record<string, string>> =>
  Object.fromEntries(
    (await c.list()).map((m) => [
      m.path,
      [...m.flags].filter((f) => f !== '\\HasNoChildren' && f !== '\\HasChildren').join(' '),
    ]),
  );

describe('full profile', () => {
  let s: DovecotServer;
  let report: SeedReport;
  beforeAll(async () => {
    s = await startDovecot({ profile: 'full' });
    report = await seedDovecot(s, demoCorpus());
  });
  afterAll(() => s?.stop());

  it('serves implicit TLS pinned to its own certificate, and STARTTLS on the plain port', async () => {
    const caps = await session(client(s, 'tls'), async (c) => ({
      secure: c.secureConnection,
      caps: [...c.capabilities.keys()],
    }));
    expect(caps.secure).toBe(true);
    for (const cap of [
      'CONDSTORE',
      'QRESYNC',
      'THREAD=REFERENCES',
      'SORT',
      'MOVE',
      'UIDPLUS',
      'SPECIAL-USE',
      'IDLE',
    ]) {
      expect(caps.caps).toContain(cap);
    }
    expect(await session(client(s, 'starttls'), async (c) => c.secureConnection)).toBe(true);
    const wrong = client(s, 'tls', { tls: { ...pin({ ...s, certSha256: '00'.repeat(32) }) } });
    await expect(wrong.connect()).rejects.toThrow();
  });

  it('offers ManageSieve on its own port', async () => {
    const greeting = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(s.sievePort ?? 0, s.host);
      let text = '';
      socket.on('error', reject);
      socket.on('data', (d: Buffer) => {
        text += d.toString('latin1');
        if (/^OK/m.test(text)) {
          socket.destroy();
          resolve(text);
        }
      });
    });
    expect(greeting).toContain('"IMPLEMENTATION"');
    expect(greeting).toContain('"SIEVE"');
  });

  it('lists the folders with their special-use attributes, All Mail as \\All', async () => {
    const list = await session(client(s, 'tls'), specialUse);
    expect(list).toMatchObject({
      INBOX: '',
      Sent: expect.stringContaining('\\Sent'),
      Drafts: expect.stringContaining('\\Drafts'),
      Junk: '\\Junk',
      Trash: '\\Trash',
      Archive: expect.stringContaining('\\Archive'),
      'All Mail': '\\All',
    });
  });

  it('seeds every folder with the counts and read state the corpus labels give', async () => {
    const want = expectedCounts('full');
    expect(report.byFolder).toEqual(want.folders);
    await session(client(s, 'plain'), async (c) => {
      for (const [folder, n] of Object.entries(want.folders)) {
        expect(await count(c, folder), folder).toBe(n);
      }
      const all = await count(c, 'All Mail');
      const f = want.folders;
      expect(all).toBe((f.INBOX ?? 0) + (f.Archive ?? 0) + (f.Sent ?? 0) + (f.Drafts ?? 0));
      await c.mailboxOpen('INBOX', { readOnly: true });
      expect(((await c.search({ seen: true }, { uid: true })) || []).length).toBe(want.seenInbox);
      expect(keywordForLabel('Work/DMARC reports')).toBe('Work/DMARC_reports');
      expect(Object.keys(want.labelsInInbox).length).toBeGreaterThan(3);
      for (const [label, n] of Object.entries(want.labelsInInbox)) {
        expect(report.keywords[label]).toBe(keywordForLabel(label));
        const hits = await c.search({ keyword: keywordForLabel(label) }, { uid: true });
        expect((hits || []).length, label).toBe(n);
      }
      const rw = await c.mailboxOpen('INBOX');
      expect(rw.permanentFlags?.has('\\*')).toBe(true);
    });
  });

  it('recreateMailbox gives INBOX and a folder a new UIDVALIDITY', async () => {
    const uv = async (folder: string): Promise<bigint> =>
      session(client(s, 'plain'), async (c) => (await c.mailboxOpen(folder, { readOnly: true })).uidValidity);
    for (const folder of ['INBOX', 'Archive']) {
      const before = await uv(folder);
      const after = await recreateMailbox(s, folder);
      expect(BigInt(after)).not.toBe(before);
      expect(await uv(folder)).toBe(BigInt(after));
    }
    const added = await appendMessage(s, 'INBOX', 'From: a@example.com\r\nSubject: new\r\n\r\nhi\r\n', {
      flags: ['\\Seen'],
      internalDate: Date.UTC(2026, 10, 30),
    });
    expect(added.uid).toBeGreaterThan(0);
  });

  it('stop() leaves no process and no temp dir', async () => {
    const dir = s.configPath.replace(/\/dovecot\.conf$/, '');
    expect(processGroupAlive(s.pid)).toBe(true);
    expect(processesMentioning(dir).length).toBeGreaterThanOrEqual(2); // master + watchdog
    await s.stop();
    expect(processGroupAlive(s.pid)).toBe(false);
    expect(processesMentioning(dir)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  });

  it('a watchdog stops the group and removes the dir when this process is gone', async () => {
    const victim = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const pgid = victim.pid ?? 0;
    const dir = tempDir('mailwarden-guard-');
    // abandon() closes our end of the pipe, which is all a dying process does to it.
    guard(pgid, dir).abandon();
    const deadline = Date.now() + 5000;
    while ((processGroupAlive(pgid) || existsSync(dir)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(processGroupAlive(pgid)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  });
});

describe('bridge profile', () => {
  let s: DovecotServer;
  let report: SeedReport;
  beforeAll(async () => {
    s = await startDovecot({ profile: 'bridge', user: 'bridge-user', password: 'bridge-pass' });
    report = await seedDovecot(s, demoCorpus());
  });
  afterAll(() => s?.stop());

  it("advertises gluon's capabilities: exactly its list after login", async () => {
    const post = await session(client(s, 'starttls'), async (c) => [...c.capabilities.keys()].join(' '));
    expect(post).toBe(BRIDGE_CAPABILITY);
    expect(BRIDGE_CAPABILITY).toBe('ID IDLE IMAP4rev1 MOVE STARTTLS UIDPLUS UNSELECT');
    // Before login Dovecot appends STARTTLS (while not yet in TLS) and the AUTH= mechanisms.
    expect(await preLoginCaps(s, 'plain')).toBe(`${BRIDGE_CAPABILITY} STARTTLS AUTH=PLAIN AUTH=LOGIN`);
    expect(await preLoginCaps(s, 'starttls')).toBe(`${BRIDGE_CAPABILITY} AUTH=PLAIN AUTH=LOGIN`);
    expect(await preLoginCaps(s, 'tls')).toBe(`${BRIDGE_CAPABILITY} AUTH=PLAIN AUTH=LOGIN`);
  });

  it("lists Bridge's folders with special-use attributes though SPECIAL-USE is not advertised", async () => {
    const list = await session(client(s, 'tls'), specialUse);
    expect(list).toMatchObject({
      INBOX: '',
      Drafts: '\\Drafts',
      Sent: '\\Sent',
      Starred: '\\Flagged',
      Archive: '\\Archive',
      Spam: '\\Junk',
      Trash: '\\Trash',
      'All Mail': '\\All',
      Folders: '',
      Labels: '',
    });
  });

  it('seeds label folders with one copy per label, keeps All Mail free of them and puts Spam and Trash in it', async () => {
    const want = expectedCounts('bridge');
    expect(report.byFolder).toEqual(want.folders);
    expect(report.keywords).toEqual({});
    expect(Object.keys(want.folders)).toContain('Labels/Work/DMARC reports');
    await session(client(s, 'plain'), async (c) => {
      for (const [folder, n] of Object.entries(want.folders)) {
        expect(await count(c, folder), folder).toBe(n);
      }
      await c.mailboxOpen('INBOX');
      expect(((await c.search({ seen: true }, { uid: true })) || []).length).toBe(want.seenInbox);
      // Keywords and PERMANENTFLAGS as Bridge states them are the front end's (imap-bridge-front.test.ts).
      const f = want.folders;
      const before = await count(c, 'All Mail');
      // Proton's All Mail is a label every message carries, spam and trash included.
      expect(before).toBe(
        (f.INBOX ?? 0) + (f.Archive ?? 0) + (f.Sent ?? 0) + (f.Drafts ?? 0) + (f.Spam ?? 0) + (f.Trash ?? 0),
      );
      await c.mailboxCreate('Folders/Clients');
      await c.append('Folders/Clients', 'From: a@example.com\r\nSubject: c\r\n\r\nhi\r\n', ['\\Flagged']);
      await c.append('Labels/Work', 'From: a@example.com\r\nSubject: l\r\n\r\nhi\r\n', ['\\Flagged']);
      expect(await count(c, 'All Mail')).toBe((before ?? Number.NaN) + 1);
      expect(await count(c, 'Starred')).toBe(1);
    });
  });
});

describe('fault proxy', () => {
  let s: DovecotServer;
  beforeAll(async () => {
    s = await startDovecot({ profile: 'full' });
  });
  afterAll(() => s?.stop());

  const viaProxy = (port: number, extra: Partial<ImapFlowOptions> = {}): ImapFlow =>
    client({ ...s, plainPort: port }, 'plain', extra);

  it('delays client commands by the configured time', async () => {
    const proxy = await startImapProxy({ target: { host: s.host, port: s.plainPort } });
    try {
      const c = viaProxy(proxy.port);
      await session(c, async () => {
        const noop = async (): Promise<number> => {
          const t = performance.now();
          await c.noop();
          return performance.now() - t;
        };
        const fast = await noop();
        proxy.setDelay(200);
        const slow = await noop();
        expect(slow - fast).toBeGreaterThanOrEqual(150);
      });
      expect(proxy.commandsSeen()).toBeGreaterThan(2);
    } finally {
      await proxy.stop();
    }
  });

  it('passes TLS through untouched', async () => {
    const proxy = await startImapProxy({ target: { host: s.host, port: s.tlsPort }, delayMs: 20 });
    try {
      const c = client({ ...s, tlsPort: proxy.port }, 'tls');
      expect(await session(c, async () => c.secureConnection)).toBe(true);
    } finally {
      await proxy.stop();
    }
  });

  it("'drop' closes the client's connection, once; 'before' keeps the command from the server", async () => {
    await appendMessage(s, 'Archive', 'From: a@example.com\r\nSubject: d\r\n\r\nhi\r\n');
    const proxy = await startImapProxy({
      target: { host: s.host, port: s.plainPort },
      faults: [{ kind: 'drop', when: /STORE .*\\Flagged/, after: 'before' }],
    });
    try {
      const c = viaProxy(proxy.port);
      await c.connect();
      await c.mailboxOpen('Archive');
      const closed = new Promise((r) => c.once('close', r));
      // imapflow reports a failed STORE as false rather than throwing.
      expect(await c.messageFlagsAdd('1:*', ['\\Flagged']).catch(() => false)).toBe(false);
      await closed;
      expect(c.usable).toBe(false);
      const flags = await s.doveadm(['fetch', '-u', s.user, 'flags', 'mailbox', 'Archive', 'all']);
      expect(flags).not.toContain('\\Flagged');
      // Spent: the next connection's STORE goes through.
      const again = viaProxy(proxy.port);
      await session(again, async () => {
        await again.mailboxOpen('Archive');
        expect(await again.messageFlagsAdd('1:*', ['\\Flagged'])).toBe(true);
      });
      // After forwarding (the default): the server did the work, the client never heard.
      proxy.setFaults([{ kind: 'drop', when: /STORE .*\\Answered/ }]);
      const third = viaProxy(proxy.port);
      await third.connect();
      await third.mailboxOpen('Archive');
      expect(await third.messageFlagsAdd('1:*', ['\\Answered']).catch(() => false)).toBe(false);
      expect(third.usable).toBe(false);
      // The server may still be finishing the command it read just before the hang-up.
      let after = '';
      for (let i = 0; i < 20 && !after.includes('\\Answered'); i++) {
        after = await s.doveadm(['fetch', '-u', s.user, 'flags', 'mailbox', 'Archive', 'all']);
        if (!after.includes('\\Answered')) await new Promise((r) => setTimeout(r, 50));
      }
      expect(after).toContain('\\Answered');
    } finally {
      await proxy.stop();
    }
  });

  it("'drop-midresponse' cuts a reply part way", async () => {
    const proxy = await startImapProxy({
      target: { host: s.host, port: s.plainPort },
      faults: [{ kind: 'drop-midresponse', when: /FETCH/, afterBytes: 10 }],
    });
    try {
      const c = viaProxy(proxy.port);
      await c.connect();
      await c.mailboxOpen('Archive');
      const closed = new Promise((r) => c.once('close', r));
      await expect(c.fetchAll('1:*', { source: true })).rejects.toThrow();
      await closed;
    } finally {
      await proxy.stop();
    }
  });

  it("'hang' leaves a command unanswered until the client's socket timeout", async () => {
    const proxy = await startImapProxy({
      target: { host: s.host, port: s.plainPort },
      faults: [{ kind: 'hang', when: /NOOP/ }],
    });
    try {
      const c = viaProxy(proxy.port, { socketTimeout: 800 });
      await c.connect();
      const closed = new Promise((r) => c.once('close', r));
      const t = performance.now();
      // imapflow's noop() swallows the failure; the timeout shows as a closed connection.
      await c.noop().catch(() => undefined);
      await closed;
      expect(performance.now() - t).toBeGreaterThanOrEqual(700);
      expect(c.usable).toBe(false);
    } finally {
      await proxy.stop();
    }
  });
});
