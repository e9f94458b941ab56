/*
 * `format: "text"`: a compact copy of a read tool's result for people and models to read, put in
 * the text content while structuredContent keeps the whole structure. Pure functions of the
 * result, keyed by tool name; src/mcp picks one. Mail-made strings arrive fenced by the tool and
 * are copied as they are, so the fences (and the notice src/mcp puts first) stay around them.
 * One line per thread or message, the fields a person reads first; zero counts, empty lists and
 * usage counters are left to structuredContent. Every id and option a follow-up call needs (a
 * thread's newest messageId, example threadIds, partIds, page tokens, unsubscribe options) is
 * in the text: a client that reads only the text can make every call the structure allows.
 */

type Obj = Record<string, unknown>;
type Renderer = (out: Obj) => string;

/** The one description of `format` every tool that has it shares (tools/list pays per word). */
export const FORMAT_DESCRIPTION = 'readable text instead of JSON';

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const objs = (v: unknown): Obj[] => arr(v).filter(isObj);
const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined ? '' : String(v));
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** 2026-11-30T05:53:00.000Z → 2026-11-30 05:53 (UTC, as the result gives it). */
function when(v: unknown): string {
  const s = str(v);
  const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)(?::\d\d(?:\.\d+)?)?(Z|[+-]\d\d:?\d\d)?$/.exec(s);
  if (m === null) return s;
  return `${m[1]} ${m[2]}${m[3] === undefined || m[3] === 'Z' ? '' : m[3]}`;
}

const empty = (v: unknown): boolean =>
  v === undefined ||
  v === null ||
  v === '' ||
  v === 0 ||
  v === false ||
  (Array.isArray(v) && v.length === 0) ||
  (isObj(v) && Object.values(v).every(empty));

/** Any value in one line: objects as k=v pairs, lists joined; empty parts left out. */
function inline(v: unknown): string {
  if (Array.isArray(v))
    return v
      .filter((x) => !empty(x))
      .map(inline)
      .join(', ');
  if (isObj(v))
    return Object.entries(v)
      .filter(([, x]) => !empty(x))
      .map(([k, x]) =>
        x === true ? k : `${k}=${isObj(x) || Array.isArray(x) ? `(${inline(x)})` : inline(x)}`,
      )
      .join(' ');
  return str(v);
}

/** Every field not already shown, as `key: value`, one per line (nested objects indented). */
function rest(o: Obj, shown: readonly string[], indent = ''): string[] {
  const lines: string[] = [];
  for (const [k, v] of Object.entries(o)) {
    if (shown.includes(k) || empty(v)) continue;
    if (isObj(v) && Object.values(v).some((x) => isObj(x))) {
      lines.push(`${indent}${k}:`, ...rest(v, [], `${indent}  `));
    } else if (Array.isArray(v) && v.some(isObj)) {
      lines.push(`${indent}${k}:`, ...v.map((x) => `${indent}  ${inline(x)}`));
    } else lines.push(`${indent}${k}: ${inline(v)}`);
  }
  return lines;
}

const counted = (n: unknown, unread: unknown): string =>
  `${num(n)}${num(unread) > 0 ? ` (${num(unread)} unread)` : ''}`;

function threadLine(t: Obj): string {
  const last = isObj(t['last']) ? str(t['last']['messageId']) : '';
  const parts = [str(t['threadId']), when(t['date'])];
  const head = `${t['unread'] === true ? '* ' : ''}${str(t['from'])} ${str(t['subject'])}`;
  const files = objs(t['attachments']).map((a) => str(a['filename']) || str(a['mimeType']));
  const extra = [
    num(t['messageCount']) > 1 ? `${num(t['messageCount'])} msgs` : '',
    // The newest message's id, for get_message, when it is not the thread id.
    last !== '' && last !== str(t['threadId']) ? `last ${last}` : '',
    arr(t['labels']).join(','),
    files.length > 0 ? `att: ${files.join(', ')}` : '',
    arr(t['signals']).join(','),
    empty(t['signalDetails']) ? '' : inline(t['signalDetails']),
    empty(t['omitted']) ? '' : `omitted ${inline(t['omitted'])}`,
    str(t['account']),
  ].filter((x) => x !== '');
  return `${parts.join(' ')} ${head}${extra.length > 0 ? ` [${extra.join('; ')}]` : ''}`;
}

const search: Renderer = (o) => {
  const threads = objs(o['threads']);
  const v = isObj(o['verification']) ? o['verification'] : {};
  return [
    `${threads.length} threads${o['nextPageToken'] ? ` (more: pageToken ${str(o['nextPageToken'])})` : ''}; * = unread`,
    ...threads.map(threadLine),
    `checked on live labels: ${arr(v['predicates']).join(' ') || 'nothing'}; dropped ${num(v['dropped'])} of ${num(v['indexHits'])}`,
    ...rest(o, ['threads', 'nextPageToken', 'verification', 'usage']),
  ].join('\n');
};

/** One message of get_thread / get_message: a header line, who, auth, then the body as text. */
function messageBlock(m: Obj): string[] {
  const a = isObj(m['authentication']) ? m['authentication'] : {};
  const auth =
    a['unchecked'] === true
      ? 'unchecked'
      : ['spf', 'dkim', 'dmarc']
          .filter((k) => a[k] !== undefined)
          .map((k) => `${k}=${str(a[k])}`)
          .concat(a['dmarcDomain'] ? [`dmarc for ${str(a['dmarcDomain'])}`] : [])
          .concat(
            isObj(a['dmarcOther'])
              ? [
                  `dmarc=${str(a['dmarcOther']['result'])} for another domain ${str(a['dmarcOther']['domain'])}`,
                ]
              : [],
          )
          .concat(a['signedBy'] ? [`signed by ${str(a['signedBy'])}`] : [])
          .concat(empty(a['fromDomains']) ? [] : [`several From: ${arr(a['fromDomains']).join(', ')}`])
          .join(' ');
  const lines = [
    `--- ${str(m['id'])} ${when(m['date'])}${m['unread'] === true ? ' unread' : ''} [${arr(m['labels']).join(',')}]`,
    `From: ${str(m['from'])}`,
    `To: ${str(m['to'])}`,
  ];
  if (str(m['cc']) !== '') lines.push(`Cc: ${str(m['cc'])}`);
  lines.push(`Auth: ${auth || 'no verdicts'}`);
  for (const f of objs(m['attachments']))
    lines.push(
      `Attachment: ${str(f['filename'])} ${str(f['mimeType'])} ${num(f['size'])} B part ${str(f['partId'])}`,
    );
  for (const h of objs(m['headers'])) lines.push(`${str(h['name'])}: ${str(h['value'])}`);
  const notes = rest(m, [
    ...['id', 'date', 'unread', 'labels', 'from', 'to', 'cc', 'subject', 'authentication'],
    ...['attachments', 'headers', 'body'],
    // The usual source says nothing; html or none does.
    ...(m['bodySource'] === 'text' ? ['bodySource'] : []),
  ]);
  lines.push(...notes);
  if (m['body'] !== undefined) lines.push(str(m['body']));
  return lines;
}

const getThread: Renderer = (o) => {
  const shown = objs(o['messages']);
  return [
    `Thread ${str(o['threadId'])}: ${str(o['subject'])} (${num(o['messageCount'])} messages${num(o['omittedMessages']) > 0 ? `, ${num(o['omittedMessages'])} not shown` : ''})`,
    ...shown.flatMap(messageBlock),
  ].join('\n');
};

const getMessage: Renderer = (o) => {
  const m = isObj(o['message']) ? o['message'] : {};
  return [`Message in thread ${str(o['threadId'])}: ${str(m['subject'])}`, ...messageBlock(m)].join('\n');
};

const listLabels: Renderer = (o) =>
  objs(o['labels'])
    .map((l) => {
      const name = str(l['name']) === str(l['id']) ? str(l['id']) : `${str(l['id'])} ${str(l['name'])}`;
      const counts =
        l['messagesTotal'] === undefined
          ? ''
          : ` ${num(l['messagesTotal'])} msgs/${num(l['threadsTotal'])} threads, ${num(l['messagesUnread'])} unread`;
      return `${name} (${str(l['type'])})${counts}`;
    })
    .join('\n');

/** A digest bucket with its example thread ids: "name 26 (13 unread) e.g. id1 id2". */
const bucket = (name: string, b: unknown): string =>
  isObj(b) && num(b['threads']) > 0 ? `${name} ${counted(b['threads'], b['unread'])}${examplesOf(b)}` : '';

const examplesOf = (b: Obj): string =>
  arr(b['examples']).length > 0 ? ` e.g. ${arr(b['examples']).join(' ')}` : '';

const buckets = (o: unknown): string =>
  isObj(o)
    ? Object.entries(o)
        .map(([k, b]) => bucket(k, b))
        .filter((x) => x !== '')
        .join(', ')
    : '';

const triageDigest: Renderer = (o) => {
  const senders = objs(o['senders']);
  const labels = objs(o['labels'])
    .map((l) => bucket(str(l['label']), l))
    .filter((x) => x !== '');
  return [
    `${str(o['query'])}: ${num(o['threads'])} threads${o['moreThreadsMatched'] === true ? ' (more matched)' : ''}, as of ${when(o['asOf'])}`,
    `unread ${num(isObj(o['unread']) ? o['unread']['threads'] : 0)}${isObj(o['unread']) ? examplesOf(o['unread']) : ''}, with attachments ${num(isObj(o['attachments']) ? o['attachments']['threads'] : 0)}${isObj(o['attachments']) ? examplesOf(o['attachments']) : ''}`,
    `signals: ${buckets(o['signals']) || 'none'}`,
    `ages: ${buckets(o['ages'])}`,
    `labels (${num(o['labelsFound'])}): ${labels.join(', ')}`,
    `senders (${num(o['sendersFound'])}):`,
    ...senders.map(
      (s) =>
        `${str(s['name'])} ${str(s['address'])} ${counted(s['threads'], s['unread'])} last ${when(s['lastDate']).slice(0, 10)}${empty(s['signals']) ? '' : ` ${inline(s['signals'])}`}${examplesOf(s)}`,
    ),
    ...rest(o, [
      ...['query', 'threads', 'moreThreadsMatched', 'asOf', 'unread', 'attachments', 'signals', 'ages'],
      ...['labels', 'labelsFound', 'senders', 'sendersFound', 'usage'],
    ]),
  ].join('\n');
};

const waitingLine = (t: Obj): string =>
  `${str(t['threadId'])} ${num(t['daysWaiting'])}d ${t['unread'] === true ? '* ' : ''}${str(t['counterpart'])} ${str(t['subject'])}${t['reason'] ? ` [${str(t['reason'])}]` : ''}`;

const followUps: Renderer = (o) =>
  [
    `${str(o['owner'])}, as of ${when(o['asOf'])}; * = unread`,
    ...(['awaitingReply', 'awaitingYou', 'setAside'] as const).flatMap((k) => [
      `${k} (${objs(o[k]).length}):`,
      ...objs(o[k]).map(waitingLine),
    ]),
    ...rest(o, ['owner', 'asOf', 'awaitingReply', 'awaitingYou', 'setAside', 'scanned', 'usage']),
  ].join('\n');

/** A sender's unsubscribe options on one line: the thread to pass to unsubscribe, then each way. */
function unsubscribeLine(s: Obj): string {
  const u = isObj(s['unsubscribe']) ? s['unsubscribe'] : undefined;
  if (u === undefined) return '';
  const urls = (k: string): string[] => objs(u[k]).map((x) => `${k} ${str(x['url'])}`);
  const ways = [
    u['oneClick'] === true
      ? `one-click ${str(u['oneClickUrl'])}`
      : `not one-click: ${str(u['notOneClickBecause'])}`,
    ...urls('https'),
    ...urls('http'),
    ...objs(u['mailto']).map(
      (m) => `mailto ${str(m['address'])}${m['subject'] ? ` subject ${str(m['subject'])}` : ''}`,
    ),
    empty(u['omitted']) ? '' : `omitted ${inline(u['omitted'])}`,
  ].filter((x) => x !== '');
  return `\n  unsubscribe (threadId ${str(s['unsubscribeThreadId'])}): ${ways.join('; ')}`;
}

const listSubscriptions: Renderer = (o) =>
  [
    `${num(o['sendersFound'])} senders in ${num(o['threadsScanned'])} threads${o['moreThreadsMatched'] === true ? ' (more matched)' : ''}`,
    ...objs(o['senders']).map(
      (s) =>
        `${str(s['name'])} ${str(s['sender'])} ${num(s['threads'])} threads (${num(s['unreadThreads'])} unread) ${when(s['firstDate']).slice(0, 10)}..${when(s['lastDate']).slice(0, 10)} newest ${str(s['newestThreadId'])}${s['listId'] ? ` list ${str(s['listId'])}` : ''}${unsubscribeLine(s)}`,
    ),
    ...rest(o, ['senders', 'sendersFound', 'threadsScanned', 'moreThreadsMatched', 'usage']),
  ].join('\n');

const listSnoozed: Renderer = (o) =>
  [
    `${num(o['total'])} snoozed${o['truncated'] === true ? ' (list truncated)' : ''}, now ${str(o['now'])} (${str(o['timeZone'])})`,
    ...objs(o['threads']).map(
      (t) =>
        `${str(t['threadId'])} due ${when(t['dueAt'])}${t['overdue'] === true ? ' OVERDUE' : ''} ${str(t['subject'])} [${str(t['label'])}]`,
    ),
    ...rest(o, ['total', 'truncated', 'now', 'timeZone', 'threads']),
  ].join('\n');

const listNewMail: Renderer = (o) =>
  [
    `${num(o['total'])} new${o['more'] === true ? ' (more waiting)' : ''}; mark: ${o['mark'] === null ? 'none yet' : inline(o['mark'])}`,
    ...objs(o['messages']).map((m) => {
      const extra = [arr(m['labels']).join(','), arr(m['signals']).join(',')].filter((x) => x !== '');
      const tail = rest(m, ['messageId', 'date', 'from', 'subject', 'labels', 'signals']).join('; ');
      return `${str(m['messageId'])} ${when(m['date'])} ${str(m['from'])} ${str(m['subject'])}${extra.length > 0 ? ` [${extra.join('; ')}]` : ''}${tail ? ` ${tail}` : ''}`;
    }),
    ...rest(o, ['total', 'more', 'mark', 'messages', 'usage']),
  ].join('\n');

const countMoves: Renderer = (o) =>
  [
    `moves ${str(o['from'])}..${str(o['to'])} (${str(o['timeZone'])})${o['complete'] === true ? '' : ' INCOMPLETE'}; zero counts left out`,
    ...rest(o, ['from', 'to', 'timeZone', 'complete']),
  ].join('\n');

/** The tools that take `format`, and their text renderers. */
export const TEXT_RENDERERS: ReadonlyMap<string, Renderer> = new Map([
  ['search', search],
  ['get_thread', getThread],
  ['get_message', getMessage],
  ['list_labels', listLabels],
  ['triage_digest', triageDigest],
  ['follow_ups', followUps],
  ['list_subscriptions', listSubscriptions],
  ['list_snoozed', listSnoozed],
  ['list_new_mail', listNewMail],
  ['count_moves', countMoves],
]);
