import { DEMO_ADDRESS } from '../../src/sandbox/corpus/index.js';
import type { SeedThread, SeedUser, SandboxMailboxView } from '../../src/sandbox/index.js';

/** A bulk mailbox for the organise tests: `digests` newsletter messages plus a few from a friend. */

export const DIGEST_FROM = 'digest@news.example';
export const DIGEST_QUERY = `from:${DIGEST_FROM}`;
export const DIGESTS_LABEL = { id: 'Label_2', name: 'Digests' };
const BASE = Date.UTC(2026, 5, 1);

function mail(from: string, subject: string, id: string): string {
  return [
    `From: ${from}`,
    `To: ${DEMO_ADDRESS}`,
    `Subject: ${subject}`,
    `Message-ID: <${id}>`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    `${subject}.`,
    '',
  ].join('\r\n');
}

/**
 * Two messages per thread, each with its own minute so Gmail's newest-first order is known.
 * Every 10th digest is already archived, every 7th already carries Digests, every 5th is unread:
 * an undo must put each back exactly as it was.
 */
export function digestLabels(i: number): string[] {
  const labels = ['CATEGORY_PROMOTIONS'];
  if (i % 10 !== 0) labels.push('INBOX');
  if (i % 7 === 0) labels.push(DIGESTS_LABEL.id);
  if (i % 5 === 0) labels.push('UNREAD');
  return labels;
}

export function bulkSeed(digests: number, friends = 20): SeedUser {
  const threads: SeedThread[] = [];
  for (let t = 0; t * 2 < digests; t++) {
    const messages = [0, 1]
      .map((k) => t * 2 + k)
      .filter((i) => i < digests)
      .map((i) => ({
        raw: mail(`Daily Digest <${DIGEST_FROM}>`, `Digest ${i}`, `digest-${i}@news.example`),
        labelIds: digestLabels(i),
        internalDate: BASE + i * 60_000,
      }));
    threads.push({ key: `digest-${t}`, messages });
  }
  for (let f = 0; f < friends; f++) {
    threads.push({
      key: `friend-${f}`,
      messages: [
        {
          raw: mail('Friend <friend@people.example>', `Hello ${f}`, `friend-${f}@people.example`),
          labelIds: ['INBOX', 'UNREAD', 'CATEGORY_PERSONAL'],
          internalDate: BASE - (f + 1) * 60_000,
        },
      ],
    });
  }
  return {
    email: DEMO_ADDRESS,
    userLabels: [
      { id: 'Label_1', name: 'Friends' },
      { id: DIGESTS_LABEL.id, name: DIGESTS_LABEL.name },
    ],
    threads,
  };
}

/** A new matching digest, as if it arrived after a dry run. */
export function lateDigest(n: number): string {
  return mail(`Daily Digest <${DIGEST_FROM}>`, `Late digest ${n}`, `late-${n}@news.example`);
}

/** Message id → sorted label ids, to compare whole-mailbox states. */
export function labelState(view: SandboxMailboxView): Map<string, string[]> {
  return new Map(view.messages.map((m) => [m.id, [...m.labelIds].sort()]));
}
