import type { SearchObject } from 'imapflow';
import { searchCompiler } from 'imapflow/lib/search-compiler.js';
import { describe, expect, it } from 'vitest';
import { extractBody, listAttachments } from '../../../src/mail/body.js';
import { decodeWords } from '../../../src/mail/headers.js';
import { parseRawMessage } from '../../../src/mail/mime.js';
import { parseQuery } from '../../../src/mail/query/index.js';
import { imapMessageFacts, matchesLocally } from '../../../src/providers/imap/facts.js';
import type { Folder, FolderModel, SearchPlan } from '../../../src/providers/imap/query.js';
import { labelNamesOf, planSearch } from '../../../src/providers/imap/query.js';

const NOW = Date.UTC(2026, 10, 15, 12);
const loc = (path: string, role?: Folder['role'], labelId?: string): Folder => ({
  path,
  kind: 'location',
  name: path.replace(/^Folders\//u, ''),
  ...(role === undefined ? {} : { role }),
  ...(labelId === undefined ? {} : { labelId }),
});
const virtual = (path: string, role: Folder['role']): Folder => ({
  path,
  kind: 'virtual',
  name: path,
  ...(role ? { role } : {}),
});
const labelFolder = (path: string): Folder => ({ path, kind: 'label', labelId: path, name: path.slice(7) });

const dovecot = (allMail: boolean): FolderModel => ({
  folders: [
    loc('INBOX', 'inbox', 'INBOX'),
    loc('Sent', 'sent', 'SENT'),
    loc('Drafts', 'drafts', 'DRAFT'),
    loc('Junk', 'junk', 'SPAM'),
    loc('Trash', 'trash', 'TRASH'),
    loc('Archive', 'archive'),
    loc('Work', undefined, 'Work'),
    ...(allMail ? [virtual('All Mail', 'all')] : []),
  ],
  keywordLabels: new Map([['#urgent', 'Urgent']]),
});
const bridge: FolderModel = {
  folders: [
    loc('INBOX', 'inbox', 'INBOX'),
    loc('Drafts', 'drafts', 'DRAFT'),
    loc('Sent', 'sent', 'SENT'),
    virtual('Starred', 'flagged'),
    loc('Archive', 'archive'),
    loc('Spam', 'junk', 'SPAM'),
    loc('Trash', 'trash', 'TRASH'),
    virtual('All Mail', 'all'),
    loc('Folders/Work', undefined, 'Folders/Work'),
    labelFolder('Labels/Receipts'),
  ],
  keywordLabels: new Map(),
  proton: true,
};
const bare: FolderModel = {
  folders: [
    loc('INBOX', 'inbox', 'INBOX'),
    loc('Sent', 'sent', 'SENT'),
    loc('Drafts', 'drafts', 'DRAFT'),
    loc('Junk', 'junk', 'SPAM'),
    loc('Trash', 'trash', 'TRASH'),
    loc('Work', undefined, 'Work'),
  ],
  keywordLabels: new Map(),
};
const MODELS = { dovecot: dovecot(false), dovecotAll: dovecot(true), bridge, bare };

const plan = (q: string, model: FolderModel): SearchPlan => planSearch(parseQuery(q), model, NOW);
const by = (p: SearchPlan, predicate: string): string | undefined =>
  p.checks.find((c) => c.predicate === predicate)?.by;
const day = (y: number, m: number, d: number): Date => new Date(Date.UTC(y, m - 1, d));

/** The SEARCH command imapflow would send, as text. */
function imapText(criteria: SearchObject): string {
  const render = (a: unknown): string =>
    Array.isArray(a) ? `(${a.map(render).join(' ')})` : String((a as { value: unknown }).value);
  const conn = { capabilities: new Map(), enabled: new Set() };
  return (searchCompiler(conn as never, criteria) as unknown[]).map(render).join(' ');
}

describe('planSearch: folder choice', () => {
  it('searches one folder for a location and leaves it to the folder', () => {
    const p = plan('in:inbox', MODELS.dovecotAll);
    expect(p).toMatchObject({ folders: ['INBOX'], empty: false, criteria: {}, exact: true, observe: [] });
    expect(by(p, 'in:inbox')).toBe('server');
    expect(plan('in:drafts', MODELS.bridge).folders).toEqual(['Drafts']);
  });

  it('uses All Mail for an unplaced query, else every location but Junk and Trash', () => {
    for (const q of ['', 'from:x']) {
      expect(plan(q, MODELS.dovecotAll).folders).toEqual(['All Mail']);
      // Proton's All Mail holds Spam and Trash too: it cannot stand in for the places left.
      expect(plan(q, MODELS.bridge).folders).toEqual(['INBOX', 'Drafts', 'Sent', 'Archive', 'Folders/Work']);
      expect(plan(q, MODELS.dovecot).folders).toEqual(['INBOX', 'Sent', 'Drafts', 'Archive', 'Work']);
      expect(plan(q, MODELS.bare).folders).toEqual(['INBOX', 'Sent', 'Drafts', 'Work']);
    }
    expect(plan('from:x', MODELS.dovecotAll)).toMatchObject({ criteria: { from: 'x' }, exact: true });
    expect(by(plan('from:x', MODELS.bare), '-in:spam')).toBe('server');
  });

  it('says where a raw-byte SEARCH (Proton Bridge) can miss mail the query should find', () => {
    const recall = (q: string, model: FolderModel, predicate: string) =>
      plan(q, model).checks.find((c) => c.predicate === predicate)?.recall;
    // Words may sit in an encoded word or a base64 body, which gluon never decodes.
    expect(recall('subject:Zürich', MODELS.bridge, 'subject:zürich')).toBe('limited');
    expect(recall('invoice', MODELS.bridge, 'invoice')).toBe('limited');
    expect(recall('from:Müller', MODELS.bridge, 'from:müller')).toBe('limited');
    // Addresses are plain ASCII in the raw header; a negated term only widens the server's answer.
    expect(recall('from:ann@example.com', MODELS.bridge, 'from:ann@example.com')).toBeUndefined();
    expect(recall('-subject:invoice', MODELS.bridge, '-subject:invoice')).toBeUndefined();
    // Dovecot decodes before it matches.
    expect(recall('subject:Zürich', MODELS.dovecotAll, 'subject:zürich')).toBeUndefined();
  });

  it('searches spam and trash only when the query names them', () => {
    expect(plan('in:anywhere', MODELS.dovecotAll).folders).toEqual(['Junk', 'Trash', 'All Mail']);
    expect(plan('in:anywhere', MODELS.bridge).folders).toEqual(['All Mail']);
    expect(plan('in:anywhere', MODELS.bare).folders).toEqual([
      'INBOX',
      'Sent',
      'Drafts',
      'Junk',
      'Trash',
      'Work',
    ]);
    expect(plan('in:spam OR in:inbox', MODELS.dovecotAll).folders).toEqual(['INBOX', 'Junk']);
    expect(plan('in:trash from:x', MODELS.bridge)).toMatchObject({
      folders: ['Trash'],
      criteria: { from: 'x' },
    });
    expect(plan('-in:trash', MODELS.bare).folders).toEqual(['INBOX', 'Sent', 'Drafts', 'Work']);
  });

  it('reads -in:inbox as true in Archive and keeps All Mail out when the folder matters', () => {
    expect(plan('-in:inbox', MODELS.dovecotAll).folders).toEqual(['Sent', 'Drafts', 'Archive', 'Work']);
    expect(plan('-in:inbox', MODELS.bridge).folders).toEqual(['Drafts', 'Sent', 'Archive', 'Folders/Work']);
    // True in INBOX whatever the sender, so All Mail hits would need their location: no All Mail.
    expect(plan('in:inbox OR from:x', MODELS.dovecotAll)).toMatchObject({
      folders: ['INBOX', 'Sent', 'Drafts', 'Archive', 'Work'],
      criteria: {},
      exact: false,
    });
  });

  it('resolves label: to a folder, a label folder or a keyword', () => {
    expect(plan('label:work', MODELS.dovecotAll).folders).toEqual(['Work']);
    expect(plan('label:work', MODELS.bridge).folders).toEqual(['Folders/Work']);
    const receipts = plan('label:Receipts', MODELS.bridge);
    // A label folder's copy does not say where the message lives: Spam and Trash tell.
    expect(receipts).toMatchObject({
      folders: ['Labels/Receipts'],
      observe: ['Spam', 'Trash'],
      exact: false,
    });
    expect(by(receipts, 'label:receipts')).toBe('server');
    expect(by(receipts, '-in:trash')).toBe('local');
    expect(plan('label:Receipts OR from:x', MODELS.bridge).folders).toEqual([
      'INBOX',
      'Drafts',
      'Sent',
      'Archive',
      'Folders/Work',
      'Labels/Receipts',
    ]);
    expect(plan('-label:Receipts from:x', MODELS.bridge)).toMatchObject({
      folders: ['INBOX', 'Drafts', 'Sent', 'Archive', 'Folders/Work'],
      observe: ['Labels/Receipts'],
      criteria: { from: 'x' },
    });
    expect(plan('label:urgent', MODELS.dovecotAll)).toMatchObject({
      folders: ['All Mail'],
      criteria: { keyword: 'urgent' },
      exact: true,
    });
    expect(plan('label:nosuch', MODELS.dovecotAll)).toMatchObject({ empty: true, folders: [] });
    expect(by(plan('label:nosuch', MODELS.dovecotAll), 'label:nosuch')).toBe('none');
  });

  it('finds nothing where a message cannot be', () => {
    // One location per message on IMAP: unlike Gmail labels, INBOX and SENT exclude each other.
    expect(plan('in:inbox in:sent', MODELS.dovecotAll)).toMatchObject({
      empty: true,
      folders: [],
      criteria: {},
    });
    expect(plan('label:Receipts -label:Receipts', MODELS.bridge).empty).toBe(true);
    const updates = plan('category:updates', MODELS.bridge);
    expect(updates.empty).toBe(true);
    expect(by(updates, 'category:updates')).toBe('none');
    expect(plan('is:important OR in:sent', MODELS.bare).folders).toEqual(['Sent']);
    expect(plan('-category:updates', MODELS.bare).folders).toEqual(['INBOX', 'Sent', 'Drafts', 'Work']);
  });
});

describe('planSearch: criteria', () => {
  it('widens after:/before: by a day on the safe side', () => {
    const p = plan('is:unread from:ann after:2026/11/01', MODELS.dovecotAll);
    expect(p.criteria).toEqual({ seen: false, from: 'ann', since: day(2026, 10, 31) });
    expect(imapText(p.criteria)).toBe('UNSEEN FROM ann SINCE 31-Oct-2026');
    expect(p.exact).toBe(false);
    expect(plan('before:2026/11/01', MODELS.bare).criteria).toEqual({ before: day(2026, 11, 2) });
    expect(plan('newer_than:2d', MODELS.bare).criteria).toEqual({ since: day(2026, 11, 13) });
    expect(plan('older_than:2d', MODELS.bare).criteria).toEqual({ before: day(2026, 11, 15) });
  });

  it('maps headers, flags and sizes', () => {
    const p = plan('is:starred -is:read list:news rfc822msgid:<a@b> deliveredto:me@x larger:1M', MODELS.bare);
    expect(p.criteria).toEqual({
      flagged: true,
      not: { seen: true },
      header: { 'List-Id': 'news', 'Message-ID': 'a@b', 'Delivered-To': 'me@x' },
      larger: 1024 * 1024,
    });
    expect(plan('size:100 smaller:5K', MODELS.bare).criteria).toEqual({ larger: 99, smaller: 5120 });
    expect(plan('subject:"big deal"', MODELS.bare).criteria).toEqual({
      subject: 'big',
      or: [{ subject: 'deal' }],
    });
  });

  it('sends every word of free text, nesting repeated keys', () => {
    const p = plan('invoice march "q1, report"', MODELS.bare);
    expect(imapText(p.criteria)).toBe('TEXT invoice (TEXT march (TEXT q1 TEXT report))');
    expect(p.checks).toContainEqual({ predicate: 'invoice', by: 'server' });
    expect(imapText(plan('{from:a to:b} {from:c to:d} {cc:e bcc:f}', MODELS.bare).criteria)).toBe(
      'OR FROM a TO b NOT NOT (OR FROM c TO d NOT NOT OR CC e BCC f)',
    );
  });

  it('negates only what the server tests exactly', () => {
    expect(plan('-(from:a OR to:b)', MODELS.bare).criteria).toEqual({
      not: { or: [{ from: 'a' }, { to: 'b' }] },
    });
    // SUBJECT b is a substring test, wider than the word b: its NOT would lose matches.
    const p = plan('-(from:a OR subject:b)', MODELS.bare);
    expect(p.criteria).toEqual({ not: { from: 'a' } });
    expect([by(p, '-from:a'), by(p, '-subject:b')]).toEqual(['server', 'local']);
    expect(plan('-after:2026/01/01', MODELS.bare).criteria).toEqual({});
  });

  it('drops an OR with a member the server cannot ask', () => {
    const p = plan('from:a OR has:attachment', MODELS.bare);
    expect(p.criteria).toEqual({});
    expect([by(p, 'from:a'), by(p, 'has:attachment')]).toEqual(['local', 'local']);
    expect(plan('is:unread (from:a OR filename:pdf)', MODELS.bare).criteria).toEqual({ seen: false });
    expect(plan('from:a OR is:muted', MODELS.bare).criteria).toEqual({ from: 'a' });
  });

  it('asks each folder the union of what its location leaves', () => {
    const p = plan('(in:inbox from:a) OR (in:sent from:b)', MODELS.dovecotAll);
    expect(p).toMatchObject({
      folders: ['INBOX', 'Sent'],
      criteria: { or: [{ from: 'a' }, { from: 'b' }] },
      exact: false,
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Outcomes: the plan run against a simulated server must return exactly the local answer.

const eml = (headers: string, body = 'hello'): string => `${headers}\r\nMessage-ID: <m@x>\r\n\r\n${body}\r\n`;
const attached = [
  'From: Ann <ann@example.com>\r\nTo: me@x\r\nSubject: Report attached\r\nMIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nsee file\r\n--b',
  'Content-Type: application/pdf\r\nContent-Disposition: attachment; filename="q1.pdf"\r\n\r\nJVBE\r\n--b--\r\n',
].join('\r\n');
/** A message as stored: its home ('work' is the user folder), label-folder copies, flags, INTERNALDATE. */
type Stored = { raw: string; at: string; labels: string[]; flags: string[]; date: number };
const msg = (raw: string, at: string, date: number, flags: string[] = [], labels: string[] = []): Stored => ({
  raw,
  at,
  labels,
  flags,
  date,
});
const CORPUS: Stored[] = [
  msg(attached, 'inbox', Date.UTC(2026, 10, 1, 7, 30), ['\\Seen']),
  msg(
    eml('From: Bob <bob@y.org>\r\nSubject: Big deal, today'),
    'inbox',
    Date.UTC(2026, 10, 1, 6),
    [],
    ['receipts'],
  ),
  msg(
    eml('From: ann@x.org\r\nSubject: =?utf-8?q?Caf=C3=A9?= menu', 'the big, deal'),
    'archive',
    Date.UTC(2026, 9, 20),
    ['\\Flagged', 'urgent'],
  ),
  msg(eml('From: me@x\r\nTo: ann@x.org\r\nSubject: Re: report'), 'sent', Date.UTC(2026, 10, 14), ['\\Seen']),
  msg(eml('From: spam@z\r\nSubject: big deal', 'buy'), 'junk', Date.UTC(2026, 10, 10), [], ['receipts']),
  msg(eml('From: ann@x.org\r\nSubject: old', 'report'), 'trash', Date.UTC(2026, 10, 2)),
  msg(
    eml('From: carol@w\r\nList-Id: <news.w>\r\nSubject: Weekly dealers'),
    'work',
    Date.UTC(2026, 10, 12),
    [],
    ['receipts'],
  ),
];
const QUERIES = [
  '',
  ...`from:ann|in:inbox|-in:inbox|in:anywhere|is:unread|is:starred|label:work|label:receipts|-label:receipts
label:urgent|has:attachment|filename:pdf|"big deal"|subject:(big deal)|report|after:2026/11/01|before:2026/11/01
newer_than:3d|older_than:20d|from:ann OR has:attachment|-(from:ann OR subject:deal)|-subject:deal|list:news
-after:2026/11/01 -larger:300|in:spam OR in:inbox|in:trash report|label:receipts in:anywhere|has:userlabels
(in:inbox is:read) OR (in:sent report)|larger:300|category:updates|in:inbox in:sent|in:inbox OR from:ann`.split(
    /[|\n]/u,
  ),
];

/** The corpus as `model` would hold it: copies in the home folder, label folders and All Mail. */
function serve(model: FolderModel) {
  const archive = model.folders.find((f) => f.role === 'archive');
  const all = model.folders.find((f) => f.role === 'all');
  return CORPUS.map((s) => {
    const { headers, root } = parseRawMessage(s.raw);
    const place = (f: Folder): boolean => (s.at === 'work' ? f.name === 'Work' : f.role === s.at);
    // With no Archive folder, archived mail stays in INBOX.
    const home = model.folders.find((f) => f.kind === 'location' && place(f)) ?? archive ?? model.folders[0]!;
    const labels = model.folders.filter((f) => f.kind === 'label' && s.labels.includes(f.name.toLowerCase()));
    // Proton's All Mail holds spam and trash too; Gmail's and the full profile's leave them out.
    const inAll = all && (model.proton === true || (home.role !== 'junk' && home.role !== 'trash'));
    const copies = [home, ...labels, ...(inAll ? [all] : [])];
    const flags = new Set(s.flags);
    const flagLabels = [
      ...(flags.has('\\Seen') ? [] : ['UNREAD']),
      ...(flags.has('\\Flagged') ? ['STARRED'] : []),
      ...[...flags].map((k) => `#${k}`).filter((id) => model.keywordLabels.has(id)),
    ];
    const facts = (found: Folder[]) =>
      imapMessageFacts({
        headers,
        root,
        internalDate: s.date,
        size: s.raw.length,
        labelIds: [...found.flatMap((f) => f.labelId ?? []), ...flagLabels],
        labelNames: labelNamesOf(model),
      });
    const decoded = headers.map((h) => ({ name: h.name.toLowerCase(), value: decodeWords(h.value) }));
    const header = (n: string): string =>
      decoded
        .filter((h) => h.name === n.toLowerCase())
        .map((h) => h.value)
        .join('\n');
    const names = listAttachments(root).map((a) => a.filename);
    const text = [...decoded.map((h) => `${h.name}: ${h.value}`), extractBody(root).text, ...names].join(
      '\n',
    );
    return { s, copies, flags, facts, text, header, size: s.raw.length };
  });
}
type Served = ReturnType<typeof serve>[number];

/** RFC 3501 §6.4.4 as a server applies it, keeping INTERNALDATE `zone` hours from UTC. */
function imapMatches(c: SearchObject, m: Served, zone: number): boolean {
  const dayOf = (t: number): number => Math.floor((t + zone * 3_600_000) / 86_400_000);
  const has = (hay: string, v: unknown): boolean => hay.toLowerCase().includes(String(v).toLowerCase());
  const key: Record<string, (v: unknown) => boolean> = {
    from: (v) => has(m.header('from'), v),
    to: (v) => has(m.header('to'), v),
    cc: (v) => has(m.header('cc'), v),
    bcc: (v) => has(m.header('bcc'), v),
    subject: (v) => has(m.header('subject'), v),
    text: (v) => has(m.text, v),
    header: (v) => Object.entries(v as Record<string, string>).every(([h, n]) => has(m.header(h), n)),
    seen: (v) => m.flags.has('\\Seen') === v,
    flagged: (v) => m.flags.has('\\Flagged') === v,
    draft: (v) => m.flags.has('\\Draft') === v,
    keyword: (v) => m.flags.has(String(v)),
    since: (v) => dayOf(m.s.date) >= (v as Date).getTime() / 86_400_000,
    before: (v) => dayOf(m.s.date) < (v as Date).getTime() / 86_400_000,
    larger: (v) => m.size > Number(v),
    smaller: (v) => m.size < Number(v),
    or: (v) => (v as SearchObject[]).some((o) => imapMatches(o, m, zone)),
    not: (v) => !imapMatches(v as SearchObject, m, zone),
  };
  return Object.entries(c).every(([k, v]) => {
    const test = key[k];
    if (test === undefined) throw new Error(`unexpected key ${k}`);
    return test(v);
  });
}

describe('planSearch + matchesLocally on a simulated server', () => {
  for (const [name, model] of Object.entries(MODELS)) {
    it(`returns exactly the local answer on ${name}`, () => {
      const served = serve(model);
      for (const q of QUERIES) {
        const node = parseQuery(q);
        const truth = served.filter((m) => matchesLocally(node, m.facts(m.copies), NOW)).map((m) => m.s.raw);
        const p = planSearch(node, model, NOW);
        for (const zone of [-12, 0, 14]) {
          const searched = [...p.folders, ...p.observe];
          const found = served.map((m) => ({
            m,
            at: m.copies.filter((f) => searched.includes(f.path) && imapMatches(p.criteria, m, zone)),
          }));
          const candidates = found.filter(({ at }) => at.some((f) => p.folders.includes(f.path)));
          const answer = candidates
            .filter(({ m, at }) => p.exact || matchesLocally(node, m.facts(at), NOW))
            .map(({ m }) => m.s.raw);
          expect({ q, zone, answer }).toEqual({ q, zone, answer: truth });
        }
      }
    });
  }
});

describe('imapMessageFacts + matchesLocally', () => {
  const facts = (raw: string, labelIds: string[], date = Date.UTC(2026, 10, 1, 7, 30)) => {
    const { headers, root } = parseRawMessage(raw);
    return imapMessageFacts({
      headers,
      root,
      internalDate: date,
      size: raw.length,
      labelIds,
      labelNames: new Map(),
    });
  };
  const local = (q: string, f: ReturnType<typeof facts>): boolean => matchesLocally(parseQuery(q), f, NOW);

  it('sees attachments, decoded subjects and phrases as the sandbox does', () => {
    const f = facts(attached, ['INBOX']);
    expect(f.attachmentNames).toEqual(['q1.pdf']);
    expect(
      ['has:attachment', 'filename:pdf', 'subject:"report attached"', 'from:ann', 'see file'].map((q) =>
        local(q, f),
      ),
    ).toEqual([true, true, true, true, true]);
    expect(local('"file see"', f)).toBe(false);
    expect(local('subject:café', facts(CORPUS[2]!.raw, ['INBOX']))).toBe(true);
  });

  it('leaves spam and trash out unless named, and draws after: at Pacific midnight', () => {
    // 2026-11-01T07:30Z is 00:30 PDT on Nov 1; 06:00Z is still Oct 31 in California.
    expect(local('after:2026/11/01', facts(attached, ['INBOX']))).toBe(true);
    expect(local('after:2026/11/01', facts(attached, ['INBOX'], Date.UTC(2026, 10, 1, 6)))).toBe(false);
    expect(local('from:ann', facts(attached, ['TRASH']))).toBe(false);
    expect(local('from:ann in:trash', facts(attached, ['TRASH']))).toBe(true);
  });
});
