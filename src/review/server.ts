import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isMailError } from '../mail/errors.js';
import type { ServerRuntime } from '../mcp/server.js';
import { LOOPBACK_NAMES, bracketed, hostName, listenOn, originAllowed } from '../mcp/host-check.js';
import { CorrespondentSet } from '../policy/correspondents.js';
import { serverTimeZone } from '../policy/move-cap.js';
import type { Env } from '../store/config.js';
import type { ToolContext } from '../tools/common/define.js';
import { html } from './html.js';
import { dailyCounts, lastDays, readLogView, undoable } from './log-view.js';
import type { LogItem } from './log-view.js';
import { messagePage, resultPage, reviewPage, undoLines } from './page.js';
import type { AccountSummary, PageContext } from './page.js';
import { addSenderToList } from './policy-edit.js';
import { STYLE } from './style.js';
import { describeMark } from './mark.js';
import { restoreItems } from './undo.js';

/*
 * The review page's server: `mailwarden review` on its own loopback port, and `/review` under
 * `mailwarden http`. It is a security boundary (docs/architecture.md, "The person's side"):
 *
 * - loopback only, with the Host and Origin checks of `mailwarden http` (DNS rebinding);
 * - a single-use login token (printed on the terminal, never the MCP bearer) becomes a session
 *   cookie, HttpOnly and SameSite=Strict, named after the port (cookies ignore ports);
 * - every POST needs the session's CSRF token and an Origin that is this very origin (another
 *   local port is the same site, so SameSite alone would let its pages post here);
 * - a CSP with no script at all (the page has none), styles from one stylesheet, no framing;
 * - every string from mail, the log or policy.json is escaped as text (src/review/html.ts).
 */

export interface ReviewDeps {
  runtime: ServerRuntime;
  env: Env;
  /** The logged, policy-gated context a person's restore runs in (as a tool call's would). */
  contextFor(account: string, logAs: string): Promise<ToolContext>;
  demo: boolean;
}

export interface ReviewApp {
  /** A fresh single-use login link under `origin` (e.g. http://127.0.0.1:8787). */
  loginUrl(origin: string): string;
  /** Serves a request whose path starts with the app's base. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/** Days the chart and the lists cover. */
export const REVIEW_DAYS = 14;
const LOGIN_TTL_MS = 60 * 60_000;
const SESSION_TTL_MS = 12 * 60 * 60_000;
const MAX_FORM_BYTES = 64 * 1024;
const MAX_SESSIONS = 16;

const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // Not no-referrer: with it Chromium sends "Origin: null" on a form post, and the post is refused.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    ...SECURITY_HEADERS,
    ...headers,
  });
  res.end(body);
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
const token = (): string => randomBytes(32).toString('base64url');
const same = (a: string, b: string): boolean => timingSafeEqual(digest(a), digest(b));

function cookies(req: IncomingMessage): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return out;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) return undefined;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function errorText(e: unknown): string {
  return isMailError(e) ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);
}

export function createReviewApp(
  deps: ReviewDeps,
  options: {
    base: string;
    /** Login tokens made before the app was loaded (`mailwarden http` prints one at start). */
    logins?: readonly string[];
    /** After each sign-in: `mailwarden http` prints the next link for the operator. */
    onSignIn?: (app: ReviewApp) => void;
  },
): ReviewApp {
  const { runtime } = deps;
  const base = options.base;
  /** Login tokens by digest (hex) → expiry; each is deleted as it is used. */
  const logins = new Map<string, number>();
  const sessions = new Map<string, { csrf: string; expires: number }>();
  const correspondents = new Map<string, CorrespondentSet>();
  const now = (): number => Date.now();
  for (const t of options.logins ?? []) logins.set(digest(t).toString('hex'), now() + LOGIN_TTL_MS);

  const cookieName = (req: IncomingMessage): string => `mw_review_${req.socket.localPort ?? 0}`;

  function session(req: IncomingMessage): { id: string; csrf: string } | undefined {
    const id = cookies(req).get(cookieName(req));
    if (id === undefined) return undefined;
    for (const [sid, s] of sessions) {
      if (s.expires < now()) sessions.delete(sid);
      else if (same(sid, id)) return { id: sid, csrf: s.csrf };
    }
    return undefined;
  }

  async function accounts(): Promise<string[]> {
    if (runtime.accounts) return (await runtime.accounts.all()).map((a) => a.name);
    return [(await runtime.mailbox()).account];
  }

  async function summary(account: string): Promise<AccountSummary> {
    const tz = serverTimeZone();
    const at = runtime.clock.now();
    const range = lastDays(at, REVIEW_DAYS, tz);
    const problems: string[] = [];
    const view = await readLogView(runtime.actionLog.source(), range, new Set([account])).catch(
      (e: unknown) => {
        problems.push(`the action log cannot be read: ${errorText(e)}`);
        return { range, calls: [], damaged: [], damagedCount: 0, lines: 0, found: false };
      },
    );
    const out: AccountSummary = {
      account,
      timeZone: tz,
      today: range.to,
      view,
      days: dailyCounts(view),
      cap: 0,
      usedToday: 0,
      problems,
    };
    try {
      const policy = await runtime.policy?.effective(account);
      if (policy !== undefined) {
        out.policy = policy;
        out.cap = policy.rules.dailyMoveCap;
      }
    } catch (e) {
      problems.push(`policy.json cannot be read: ${errorText(e)}`);
    }
    try {
      // As the gate counts it, from the store the server writes (MAILWARDEN_STATE).
      if (runtime.policy !== undefined) out.usedToday = await runtime.policy.movesToday(account, at, tz);
    } catch (e) {
      problems.push(errorText(e));
    }
    try {
      const mark = await runtime.inboxMarks?.read(account);
      if (mark !== undefined) out.mark = describeMark(mark, tz);
    } catch (e) {
      problems.push(`the new-mail mark cannot be read: ${errorText(e)}`);
    }
    try {
      const mailbox = runtime.accounts ? await runtime.accounts.mailboxFor(account) : await runtime.mailbox();
      out.provider = mailbox.provider;
      if (out.policy?.rules.protectCorrespondents) {
        const rules = out.policy.rules;
        let set = correspondents.get(account);
        if (set === undefined) {
          set = new CorrespondentSet(mailbox, {
            days: rules.correspondentsDays,
            refreshMinutes: rules.correspondentsRefreshMinutes,
            clock: runtime.clock,
          });
          correspondents.set(account, set);
        }
        set.configure(rules.correspondentsDays, rules.correspondentsRefreshMinutes);
        await set.warm();
        const st = set.status();
        out.correspondents =
          st.lastError !== undefined && st.refreshedAt === undefined
            ? { error: st.lastError }
            : {
                addresses: st.addresses,
                ...(st.refreshedAt === undefined ? {} : { refreshedAt: st.refreshedAt }),
              };
      }
    } catch (e) {
      out.correspondents = { error: errorText(e) };
    }
    return out;
  }

  function pageContext(csrf: string): PageContext {
    return { base, csrf, demo: deps.demo };
  }

  async function login(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const given = url.searchParams.get('token') ?? '';
    const key = digest(given).toString('hex');
    const expires = logins.get(key);
    for (const [k, t] of logins) if (t < now()) logins.delete(k);
    if (given === '' || expires === undefined || expires < now())
      return send(
        res,
        403,
        messagePage(
          pageContext(''),
          'This login link is not valid',
          'It is wrong, expired or already used: each link works once. Run `mailwarden review` again (or look for the next link `mailwarden http` printed) for a new one.',
        ),
      );
    logins.delete(key);
    if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value as string);
    const id = token();
    sessions.set(id, { csrf: token(), expires: now() + SESSION_TTL_MS });
    const path = base === '' ? '/' : base;
    res.writeHead(303, {
      ...SECURITY_HEADERS,
      location: `${base}/`,
      'set-cookie': `${cookieName(req)}=${id}; HttpOnly; SameSite=Strict; Path=${path}; Max-Age=${SESSION_TTL_MS / 1000}`,
    });
    res.end();
    options.onSignIn?.(app);
  }

  async function restore(form: URLSearchParams, csrf: string): Promise<{ status: number; body: string }> {
    const ctx = pageContext(csrf);
    const account = form.get('account') ?? '';
    if (!(await accounts()).includes(account))
      return { status: 400, body: messagePage(ctx, 'Nothing restored', 'That account is not served here.') };
    const tz = serverTimeZone();
    const view = await readLogView(
      runtime.actionLog.source(),
      lastDays(runtime.clock.now(), REVIEW_DAYS, tz),
      new Set([account]),
    );
    const all = view.calls.flatMap((c) => c.items).filter(undoable);
    let chosen: LogItem[];
    if (form.get('scope') === 'call') {
      const call = form.get('call') ?? '';
      chosen = all.filter((i) => i.call !== undefined && i.call === call);
    } else {
      const picked = new Set(form.getAll('item'));
      chosen = all.filter((i) => i.ids.some((id) => picked.has(`${i.unit}:${id}`)));
    }
    if (chosen.length === 0)
      return {
        status: 400,
        body: messagePage(
          ctx,
          'Nothing restored',
          'Choose at least one item that an agent or rule moved out of the inbox.',
        ),
      };
    const mailCtx = await deps.contextFor(account, 'review');
    const results = await restoreItems(mailCtx, chosen, { dryRun: false, tool: 'review' });
    const restored = results.filter((r) => r.status === 'restored').length;
    return {
      status: 200,
      body: resultPage(ctx, `Restored ${restored} of ${results.length}`, undoLines(results)),
    };
  }

  async function sender(form: URLSearchParams, csrf: string): Promise<{ status: number; body: string }> {
    const ctx = pageContext(csrf);
    const account = form.get('account') ?? '';
    if (!(await accounts()).includes(account))
      return { status: 400, body: messagePage(ctx, 'Nothing changed', 'That account is not served here.') };
    const packed = form.get('rule');
    const sp = packed?.indexOf(' ') ?? -1;
    const list =
      packed !== null && packed !== undefined && sp > 0 ? packed.slice(0, sp) : (form.get('list') ?? '');
    const who =
      packed !== null && packed !== undefined && sp > 0 ? packed.slice(sp + 1) : (form.get('sender') ?? '');
    try {
      const c = await addSenderToList(deps.env, runtime.actionLog, account, list, who);
      const names = {
        archive: 'the archive rules',
        spam: 'the spam rules',
        neverMove: 'the never-move list',
      };
      return {
        status: 200,
        body: resultPage(ctx, c.changed ? 'Policy changed' : 'Already there', [
          {
            ok: true,
            text: html`${c.rule} is ${c.changed ? 'now' : 'already'} on ${names[c.list]} of ${c.account}
            (${c.path})`,
          },
        ]),
      };
    } catch (e) {
      return { status: 400, body: messagePage(ctx, 'Nothing changed', errorText(e)) };
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname.slice(base.length) || '/';
    const method = (req.method ?? 'GET').toUpperCase();
    if (path === '/style.css' && method === 'GET')
      return send(res, 200, STYLE, { 'content-type': 'text/css; charset=utf-8' });
    if (path === '/login' && method === 'GET') return login(req, res, url);
    if (path === '/favicon.ico') return send(res, 204, '');
    const s = session(req);
    if (s === undefined)
      return send(
        res,
        401,
        messagePage(
          pageContext(''),
          'Not signed in',
          'Open the link `mailwarden review` printed (each link works once), or run it again for a new one.',
        ),
      );
    if (method === 'GET' && path === '/') {
      const summaries = await Promise.all((await accounts()).map(summary));
      return send(res, 200, reviewPage(summaries, pageContext(s.csrf)));
    }
    if (method === 'POST' && (path === '/restore' || path === '/sender')) {
      // This very origin, not just a loopback name: another local port is the same site.
      const origin = req.headers.origin;
      const self = `http://${req.headers.host ?? ''}`;
      if (origin !== undefined && origin !== self)
        return send(
          res,
          403,
          messagePage(pageContext(s.csrf), 'Refused', 'The request came from another origin.'),
        );
      const fetchSite = req.headers['sec-fetch-site'];
      if (fetchSite !== undefined && fetchSite !== 'same-origin')
        return send(
          res,
          403,
          messagePage(pageContext(s.csrf), 'Refused', 'The request came from another site.'),
        );
      const form = await readForm(req);
      if (form === undefined)
        return send(res, 400, messagePage(pageContext(s.csrf), 'Refused', 'Not a form this page sends.'));
      if (!same(form.get('csrf') ?? '', s.csrf))
        return send(
          res,
          403,
          messagePage(
            pageContext(s.csrf),
            'Refused: the form token is missing or wrong',
            'Nothing was changed. Reload the review page and try again from it.',
          ),
        );
      const r = path === '/restore' ? await restore(form, s.csrf) : await sender(form, s.csrf);
      return send(res, r.status, r.body);
    }
    if (method !== 'GET' && method !== 'POST') return send(res, 405, '', { allow: 'GET, POST' });
    return send(res, 404, messagePage(pageContext(s.csrf), 'Not found', 'There is no such page here.'));
  }

  const app: ReviewApp = {
    loginUrl(origin) {
      const t = token();
      logins.set(digest(t).toString('hex'), now() + LOGIN_TTL_MS);
      return `${origin}${base}/login?token=${t}`;
    },
    handle,
  };
  return app;
}

/** `mailwarden review`: the app alone on a loopback port (0: one the system picks). */
export async function serveReview(
  deps: ReviewDeps,
  options: { host: string; port: number },
): Promise<{ origin: string; app: ReviewApp; close(): Promise<void> }> {
  if (!LOOPBACK_NAMES.includes(bracketed(options.host)) && !/^127\./.test(options.host))
    throw new Error(`the review page is served on loopback only, not on ${options.host}`);
  const app = createReviewApp(deps, { base: '' });
  const names = new Set([...LOOPBACK_NAMES, bracketed(options.host)]);
  const server = createServer((req, res) => {
    const host = hostName(req.headers.host);
    if (host === undefined || !names.has(host))
      return send(res, 403, 'Invalid Host header', { 'content-type': 'text/plain; charset=utf-8' });
    if (!originAllowed(req.headers.origin, names))
      return send(res, 403, 'Invalid Origin', { 'content-type': 'text/plain; charset=utf-8' });
    app.handle(req, res).catch((e: unknown) => {
      runtime.log.warn('review page: request failed', { error: errorText(e) });
      if (!res.headersSent) send(res, 500, 'internal error', { 'content-type': 'text/plain; charset=utf-8' });
      else res.end();
    });
  });
  const runtime = deps.runtime;
  server.headersTimeout = 10_000;
  server.requestTimeout = 120_000;
  const port = await listenOn(server, options.port, options.host);
  return {
    origin: `http://${bracketed(options.host)}:${port}`,
    app,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
