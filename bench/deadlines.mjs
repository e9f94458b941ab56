// Deadlines, rate limits and hangs (issue 9 item 3), measured with the server's default limits:
// for a persistent 429 and a persistent 503, the requests and seconds until the tool's error;
// for a hung request, the seconds until the tool answers. One sandbox, one spawned server, the
// real MCP client; faults are injected by the sandbox (src/sandbox/faults.ts). Prints JSON.
import { DEMO_ADDRESS, demoCorpus } from '../dist/sandbox/corpus/index.js';
import { Sandbox } from '../dist/sandbox/index.js';
import { configFor, connect, round } from './lib.mjs';

const sandbox = await Sandbox.start({ users: [demoCorpus()] });
const dir = configFor(sandbox, DEMO_ADDRESS);
const client = await connect({
  HOME: dir,
  MAILWARDEN_CONFIG_DIR: dir,
  MAILWARDEN_SANDBOX_URL: sandbox.url,
  MAILWARDEN_TOOLS: 'read,manage',
});

function errorOf(r) {
  if (!r.isError) return undefined;
  const structured = r.structuredContent?.error;
  if (structured) return structured;
  const text = (r.content ?? []).map((c) => c.text ?? '').join('');
  try {
    const parsed = JSON.parse(text.slice(text.indexOf('{')));
    return parsed.error ?? parsed;
  } catch {
    return { code: 'unparsed', message: text };
  }
}

/** One tool call under a scripted fault: what it cost and how it ended. */
async function measure(name, tool, args, rules) {
  sandbox.faults.script(rules);
  sandbox.resetStats();
  const t = performance.now();
  const r = await client.callTool({ name: tool, arguments: args });
  const seconds = round((performance.now() - t) / 1000, 2);
  sandbox.faults.clear();
  const stats = sandbox.stats();
  const error = errorOf(r);
  const out = {
    name,
    tool,
    requests: stats.requests,
    apiCalls: stats.apiCalls,
    seconds,
    isError: r.isError === true,
    ...(error ? { code: error.code, retryAfterSeconds: error.retryAfterSeconds } : {}),
  };
  if (!r.isError && r.structuredContent) {
    const s = r.structuredContent;
    if (Array.isArray(s.chunks)) out.chunks = s.chunks.map((c) => c.outcome);
    if (Array.isArray(s.changed)) out.changed = s.changed.length;
    if (Array.isArray(s.failed)) out.failed = s.failed.map((f) => f.code);
  }
  // Let Retry-After pass so one measurement's rate limit does not answer the next.
  await new Promise((resolve) => setTimeout(resolve, 2100));
  return out;
}

await client.callTool({ name: 'get_profile', arguments: {} }); // token fetched before any fault
const inbox = sandbox
  .mailbox(DEMO_ADDRESS)
  .messages.filter((m) => m.labelIds.includes('INBOX'))
  .map((m) => m.threadId);

const results = [
  await measure('persistent 429 (Retry-After: 1)', 'get_profile', {}, [
    { method: 'getProfile', kind: '429', retryAfterSeconds: 1 },
  ]),
  await measure('persistent 503', 'get_profile', {}, [{ method: 'getProfile', kind: 'http503' }]),
  await measure('search, persistent 429 on threads.get', 'search', { query: 'in:inbox', maxResults: 10 }, [
    { method: 'threads.get', kind: '429', retryAfterSeconds: 1 },
  ]),
  await measure('hung read (getProfile)', 'get_profile', {}, [{ method: 'getProfile', kind: 'hang' }]),
  await measure('hung write that landed (threads.modify)', 'archive', { threadId: inbox[0] }, [
    { method: 'threads.modify', kind: 'hang', apply: true, times: 1 },
  ]),
  await measure('hung write that never arrived (threads.modify)', 'archive', { threadId: inbox[1] }, [
    { method: 'threads.modify', kind: 'hang', times: 1 },
  ]),
  await measure(
    'hung batchModify that Gmail applied (bulk_modify)',
    'bulk_modify',
    { query: 'in:inbox', add: ['STARRED'] },
    [{ method: 'messages.batchModify', kind: 'hang', apply: true, times: 1 }],
  ),
  await measure(
    'hung batchModify that never arrived (bulk_modify)',
    'bulk_modify',
    { query: 'in:inbox', add: ['STARRED'], remove: ['UNREAD'] },
    [{ method: 'messages.batchModify', kind: 'hang', times: 1 }],
  ),
  // Last: Google asked for 30 s, so for 30 s nothing more is sent.
  await measure('persistent 429 (Retry-After: 30, over the 20 s wait)', 'get_profile', {}, [
    { method: 'getProfile', kind: '429', retryAfterSeconds: 30 },
  ]),
];

await client.close();
await sandbox.close();
console.log(
  JSON.stringify(
    {
      limits:
        'defaults: MAILWARDEN_REQUEST_TIMEOUT_MS 20000, MAILWARDEN_WRITE_TIMEOUT_MS 30000, MAILWARDEN_RATE_LIMIT_MAX_WAIT_MS 20000, MAILWARDEN_CALL_BUDGET_MS 120000',
      results,
    },
    null,
    2,
  ),
);
