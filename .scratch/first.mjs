import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_NOW } from '../dist/sandbox/corpus/index.js';
import { startImapDemo } from '../dist/sandbox/imap-account.js';
const MAIN = new URL('../dist/bundle/main.js', import.meta.url).pathname;
const VARIANT = process.env.BENCH_BRIDGE ?? 'default';
const demo = await startImapDemo({ profile: process.env.PROFILE ?? 'bridge', delayMs: Number(process.env.DELAY ?? 0),
  ...(VARIANT === 'no-all-mail' ? { bridge: { allMail: false } } : {}) });
writeFileSync(join(demo.configDir, 'policy.json'), JSON.stringify({ default: { dailyMoveCap: 0 } }));
const env = { PATH: process.env.PATH, HOME: demo.configDir, ...demo.env, MAILWARDEN_NOW: new Date(DEFAULT_NOW).toISOString(), TZ: 'UTC', MAILWARDEN_CALL_BUDGET_MS: '600000' };
const front = demo.proxy;
const calls = JSON.parse(process.argv[2] ?? '[["search",{"query":"in:inbox is:unread","maxResults":10}]]');
try {
  const transport = new StdioClientTransport({ command: process.execPath, args: [MAIN], env, stderr: 'inherit' });
  const client = new Client({ name: 'b', version: '0' }, { versionNegotiation: { mode: 'legacy' } });
  await client.connect(transport);
  for (const [name, args] of calls) {
    const from = front ? front.commands().length : 0;
    const r = await client.callTool({ name, arguments: args }, { timeout: 900000 });
    await new Promise((r) => setTimeout(r, 200));
    const cmds = front ? front.commands().slice(from).map((c) => c.text.replace(/^\S+ /, '').slice(0, 110)) : [];
    console.log(`== ${name} ${JSON.stringify(args)}: ${cmds.length} commands`);
    console.log(cmds.join('\n'));
    const out = r.structuredContent ?? {};
    if (process.env.SHOW) console.log(JSON.stringify(out, null, 1).slice(0, Number(process.env.SHOW)));
    else console.log(r.isError ? r.content[0].text : JSON.stringify(out).slice(0, 300));
  }
  await client.close();
} finally { await demo.close(); }
