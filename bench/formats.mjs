// node bench/formats.mjs (after npm run build): characters of the text content of the same calls
// in format "json" (the serialized structure) and format "text" (the readable copy), on the demo
// sandbox through the built server and the real MCP client. Prints JSON. The demo corpus has no
// 10-message thread: its longest thread is used, and named.
import { DEFAULT_NOW, DEMO_ADDRESS, demoCorpus } from '../dist/sandbox/corpus/index.js';
import { Sandbox } from '../dist/sandbox/index.js';
import { configFor, connect, machine, round } from './lib.mjs';

const corpus = demoCorpus();
const longest = [...corpus.threads].sort((a, b) => b.messages.length - a.messages.length)[0];
const sandbox = await Sandbox.start({ users: [corpus] });
const client = await connect({
  MAILWARDEN_CONFIG_DIR: configFor(sandbox, DEMO_ADDRESS),
  MAILWARDEN_SANDBOX_URL: sandbox.url,
  MAILWARDEN_NOW: new Date(DEFAULT_NOW).toISOString(),
});
await client.callTool({ name: 'list_labels', arguments: {} }); // token refresh and label names

const threadId = sandbox.threadIdForKey(DEMO_ADDRESS, longest.key);
const calls = [
  { name: 'search', args: { query: 'in:inbox', maxResults: 10 }, what: 'search of 10 (in:inbox)' },
  {
    name: 'get_thread',
    args: { threadId },
    what: `thread of ${longest.messages.length} messages (the corpus's longest, "${longest.key}"), bodies: text`,
  },
  // The bodies are the same text in both copies; these show what the rest of a message costs.
  {
    name: 'get_thread',
    args: { threadId, bodies: 'new' },
    what: `the same thread, bodies: new`,
  },
  {
    name: 'get_thread',
    args: { threadId, bodies: 'none' },
    what: `the same thread, bodies: none`,
  },
  { name: 'triage_digest', args: { maxThreads: 100 }, what: 'triage_digest of 100 inbox threads' },
];

const textOf = (r) => (r.content ?? []).map((c) => c.text ?? '').join('\n');
const results = [];
for (const c of calls) {
  const chars = {};
  for (const format of ['json', 'text']) {
    sandbox.clock.advance(61_000); // a fresh quota minute per call
    const r = await client.callTool({ name: c.name, arguments: { ...c.args, format } }, { timeout: 600_000 });
    if (r.isError) throw new Error(`${c.name} (${format}) failed: ${textOf(r)}`);
    chars[format] = textOf(r).length;
  }
  results.push({
    tool: c.name,
    call: c.what,
    jsonChars: chars.json,
    textChars: chars.text,
    ratio: round(chars.text / chars.json, 2),
  });
}
await client.close();
await sandbox.close();
console.log(JSON.stringify({ machine: machine(), results }, null, 2));
