import { spawnSync } from 'node:child_process';
import { connectLocal } from '../mcp/local-client.js';
import { DEMO_FACTS } from '../sandbox/corpus/index.js';
import { call, show } from './kit.js';
import { buildRuntime } from '../cli/runtime.js';

/* The tour prints for a person, so plain console output is the point here. */

const INSTALL =
  'mailwarden demo --imap needs Dovecot, which it starts as a throwaway server (nothing is installed as a service):\n' +
  '  Debian/Ubuntu:  sudo apt-get install dovecot-imapd\n' +
  '  Fedora:         sudo dnf install dovecot\n' +
  '  macOS:          brew install dovecot\n' +
  'then run mailwarden demo --imap again.';

interface SearchOut {
  threads: Array<{ threadId: string; subject: string; from: string; unread: boolean; labels: string[] }>;
  verification: { predicates: string[]; indexHits: number; dropped: number };
  usage: { requests: number };
}

function dovecotInstalled(): boolean {
  return spawnSync('dovecot', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * `mailwarden demo --imap`: the read tools on a real IMAP server — a throwaway Dovecot seeded
 * with the demo corpus, set up like Proton Mail Bridge (STARTTLS, a self-signed certificate
 * pinned by SHA-256, Proton's folder names, gluon's capabilities), or `--profile full` for a
 * plain Dovecot with every extension.
 */
export async function runImapDemo(profile: 'bridge' | 'full'): Promise<number> {
  if (!dovecotInstalled()) {
    console.error(INSTALL);
    return 1;
  }
  const { startImapDemo, imapThreadIdForKey } = await import('../sandbox/imap-account.js');
  const imap = await startImapDemo({ profile, delayMs: profile === 'bridge' ? 50 : 0 });
  const built = await buildRuntime({
    demo: false,
    env: { ...process.env, ...imap.env, MAILWARDEN_TOOLS: 'read' },
  });
  const client = await connectLocal(built.runtime);
  try {
    console.log(`mailwarden demo --imap — the real tools on a throwaway Dovecot (${profile} profile)`);
    console.log(
      `  ${imap.settings.security} to ${imap.settings.host}:${imap.settings.port}, certificate pinned to sha256 ${imap.settings.pinSha256?.slice(0, 16)}…` +
        (profile === 'bridge' ? ' (50 ms added to every command, like a slow Bridge)' : ''),
    );
    const p = await call<{ emailAddress: string; messagesTotal: number; threadsTotal: number }>(
      client,
      'get_profile',
      {},
    );
    console.log(`  ${p.emailAddress}: ${p.messagesTotal} messages in ${p.threadsTotal} conversations`);

    console.log('\n1. The folders as labels.');
    const l = await call<{ labels: Array<{ id: string; name: string; type: string }> }>(
      client,
      'list_labels',
      {},
    );
    console.log(`   ${l.labels.map((x) => show(x.name)).join(', ')}`);

    console.log('\n2. Unread mail in the inbox, newest first (IMAP SEARCH, then checked locally).');
    const s = await call<SearchOut>(client, 'search', { query: 'in:inbox is:unread', maxResults: 5 });
    for (const t of s.threads) console.log(`   • ${show(t.subject)} — ${show(t.from)}`);
    console.log(`   IMAP commands: ${s.usage.requests}`);

    console.log('\n3. A long thread rebuilt from Message-ID / References, quoted history stripped.');
    const t = await call<{ subject: string; messageCount: number; omittedMessages: number }>(
      client,
      'get_thread',
      {
        threadId: imapThreadIdForKey(DEMO_FACTS.keys.longQuoted),
        bodies: 'new',
        lastN: 2,
      },
    );
    console.log(
      `   "${show(t.subject)}": ${t.messageCount} messages, showing the last ${t.messageCount - t.omittedMessages}`,
    );

    console.log('\n4. A forged "pass" below the receiving server\'s own report is not believed.');
    const f = await call<{ messages: Array<{ authentication: Record<string, unknown> }> }>(
      client,
      'get_thread',
      {
        threadId: imapThreadIdForKey(DEMO_FACTS.keys.forgedAuthBelow),
        bodies: 'none',
      },
    );
    const a = f.messages[0]?.authentication ?? {};
    console.log(
      `   spf=${String(a['spf'] ?? 'none')} dkim=${String(a['dkim'] ?? 'none')} dmarc=${String(a['dmarc'] ?? 'none')}`,
    );

    console.log('\n5. Who is waiting on an answer (from the Sent folder).');
    const fu = await call<{ awaitingReply: Array<{ subject: string }> }>(client, 'follow_ups', {});
    for (const r of fu.awaitingReply.slice(0, 5)) console.log(`   • ${show(r.subject)}`);

    console.log(`
Your own IMAP account (Proton Mail Bridge shown; see the README for Fastmail and Dovecot):
  mailwarden accounts add proton --imap --host 127.0.0.1 --port 1143 --starttls --user you@proton.me --pin-from-server
  mailwarden check --account proton`);
    return 0;
  } finally {
    await client.close();
    await built.close();
    await imap.close();
  }
}
