import { headerValue } from '../../src/mail/headers.js';
import { parseRawMessage } from '../../src/mail/mime.js';
import { cleanMessageId, referenceIds } from '../../src/providers/imap/ids.js';
import { DEMO_FACTS, demoCorpus } from '../../src/sandbox/corpus/index.js';
import { rawBytes } from '../../src/sandbox/message.js';
import type { BackendKind } from './backends.js';

/*
 * Known answers per backend, counted from the corpus sources here, independently of the code
 * under test. Gmail threads by its own rules (the sandbox keeps the corpus's threads); IMAP
 * threads are conversations connected by Message-ID / References / In-Reply-To, so the two
 * corpus messages written to start a new conversation inside a Gmail thread count apart.
 */

interface CorpusMessage {
  key: string;
  labels: ReadonlySet<string>;
  messageId: string | undefined;
  links: string[];
}

const messages: CorpusMessage[] = demoCorpus().threads.flatMap((t) =>
  t.messages.map((m) => {
    const { headers } = parseRawMessage(rawBytes(m.raw));
    const messageId = cleanMessageId(headerValue(headers, 'Message-ID'));
    return {
      key: t.key,
      labels: new Set(m.labelIds),
      messageId,
      links: [
        ...(messageId === undefined ? [] : [messageId]),
        ...referenceIds(headerValue(headers, 'References')),
        ...referenceIds(headerValue(headers, 'In-Reply-To')),
      ],
    };
  }),
);

/** Conversations: messages joined by the ids they name (union-find). */
function conversations(): CorpusMessage[][] {
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    while (parent.has(x) && parent.get(x) !== x) x = parent.get(x) as string;
    return x;
  };
  for (const m of messages) {
    const [first, ...rest] = m.links;
    if (first === undefined) continue;
    if (!parent.has(first)) parent.set(first, first);
    for (const l of rest) {
      if (!parent.has(l)) parent.set(l, l);
      const a = find(first);
      const b = find(l);
      if (a !== b) parent.set(a, b);
    }
  }
  const groups = new Map<string, CorpusMessage[]>();
  for (const m of messages) {
    const k = find(m.links[0] ?? '');
    groups.set(k, [...(groups.get(k) ?? []), m]);
  }
  return [...groups.values()];
}

const CONVERSATIONS = conversations();

/** Where a message sits on IMAP, as the seeding puts it (TRASH, then SPAM win). */
const where = (m: CorpusMessage): 'trash' | 'spam' | 'other' =>
  m.labels.has('TRASH') ? 'trash' : m.labels.has('SPAM') ? 'spam' : 'other';

export interface Answers {
  threads: number;
  inbox: number;
  unreadInbox: number;
  spam: number;
  trash: number;
}

export function answersFor(kind: BackendKind): Answers {
  if (kind === 'gmail')
    return {
      threads: DEMO_FACTS.threadCount,
      inbox: DEMO_FACTS.inboxThreadCount,
      unreadInbox: DEMO_FACTS.unreadInboxThreadCount,
      spam: DEMO_FACTS.spamThreadCount,
      trash: DEMO_FACTS.trashThreadCount,
    };
  const count = (test: (m: CorpusMessage) => boolean) => CONVERSATIONS.filter((c) => c.some(test)).length;
  return {
    threads: CONVERSATIONS.length,
    inbox: count((m) => m.labels.has('INBOX') && where(m) === 'other'),
    // IMAP search is per message, as Gmail's is: a message both in INBOX and unread.
    unreadInbox: count((m) => m.labels.has('INBOX') && m.labels.has('UNREAD') && where(m) === 'other'),
    spam: count((m) => where(m) === 'spam'),
    trash: count((m) => where(m) === 'trash'),
  };
}

/** Corpus thread keys whose messages all belong to one conversation (ids agree on every backend). */
export function messagesOfKey(key: string): number {
  return messages.filter((m) => m.key === key).length;
}
