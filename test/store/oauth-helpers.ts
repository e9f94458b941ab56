import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_ADDRESS, demoCorpus } from '../../src/sandbox/corpus/index.js';
import { Sandbox } from '../../src/sandbox/index.js';
import type { SeedUser } from '../../src/sandbox/index.js';
import { MAIN } from '../helpers/stack.js';
import { tempDir } from '../helpers/temp.js';

/** Shared by the auth, check and browser tests: a sandbox, a config dir, the built CLI as a child. */

export const OTHER_ADDRESS = 'other@mailwarden.example';
export const otherUser: SeedUser = { email: OTHER_ADDRESS, userLabels: [], threads: [] };

export function startSandbox(): Promise<Sandbox> {
  return Sandbox.start({ users: [demoCorpus(), otherUser] });
}

export function credentialsFor(sandbox: Sandbox): unknown {
  return {
    installed: { client_id: sandbox.oauthClient.clientId, client_secret: sandbox.oauthClient.clientSecret },
  };
}

/** A fresh config dir with the sandbox's Desktop-app client in it (or the given credentials). */
export function makeConfigDir(sandbox: Sandbox, credentials: unknown = credentialsFor(sandbox)): string {
  const dir = tempDir('mailwarden-auth-');
  if (credentials !== null) writeFileSync(join(dir, 'credentials.json'), JSON.stringify(credentials));
  mkdirSync(join(dir, 'tokens'), { mode: 0o700 });
  return dir;
}

/**
 * The child's whole environment. MAILWARDEN_KEYSTORE=off unless a test asks otherwise, so no
 * test run writes to a developer's real keyring.
 */
export function cliEnv(
  dir: string,
  sandbox: Sandbox,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '',
    HOME: dir,
    MAILWARDEN_CONFIG_DIR: dir,
    MAILWARDEN_SANDBOX_URL: sandbox.url,
    MAILWARDEN_KEYSTORE: 'off',
    ...extra,
  };
}

export interface CliResult {
  code: number | null;
  out: string;
  err: string;
}

/** Async spawn: the sandbox lives in this process, so a blocking spawnSync would starve it. */
export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return startCli(args, env).done;
}

export interface RunningCli {
  child: ChildProcessWithoutNullStreams;
  done: Promise<CliResult>;
  /** The consent URL `auth` prints on its own line. */
  url: Promise<string>;
}

export function startCli(args: string[], env: Record<string, string>): RunningCli {
  const child = spawn(process.execPath, [MAIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let found: ((url: string) => void) | undefined;
  const url = new Promise<string>((resolve, reject) => {
    found = resolve;
    child.on('exit', () => reject(new Error(`no URL printed; stdout: ${out}; stderr: ${err}`)));
  });
  url.catch(() => undefined);
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    const m = /^ {2}(http\S+\/o\/oauth2\/v2\/auth\?\S+)$/m.exec(out);
    if (m?.[1] !== undefined) found?.(m[1]);
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<CliResult>((resolve) => child.on('close', (code) => resolve({ code, out, err })));
  return { child, done, url };
}

export interface ConsentChoice {
  decision: 'approve' | 'deny';
  account?: string;
  /** The scopes left ticked; all of them by default. */
  scopes?: string[];
  /** Rewrites the redirect the consent page answers with before the "browser" follows it. */
  tamper?: (location: URL) => void;
}

/** What a browser does on the consent page, with fetch: GET the page, POST the form, follow the redirect. */
export async function consentWithFetch(
  authUrl: string,
  choice: ConsentChoice,
): Promise<{ status: number; text: string; location: URL }> {
  const page = await (await fetch(authUrl)).text();
  const request = /name="request" value="([^"]+)"/.exec(page)?.[1];
  if (request === undefined) throw new Error(`no consent form: ${page}`);
  const form = new URLSearchParams({
    request,
    account: choice.account ?? DEMO_ADDRESS,
    decision: choice.decision,
  });
  const offered = [...page.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1] as string);
  for (const s of choice.scopes ?? offered) form.append('scope', s);
  const decided = await fetch(new URL('/o/oauth2/v2/auth', authUrl), {
    method: 'POST',
    body: form,
    redirect: 'manual',
  });
  const location = new URL(decided.headers.get('location') ?? 'http://invalid/');
  choice.tamper?.(location);
  const res = await fetch(location);
  return { status: res.status, text: await res.text(), location };
}
