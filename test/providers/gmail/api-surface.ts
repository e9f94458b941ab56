import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** One method of the Gmail v1 API as the installed generated client declares it. */
export interface ApiMethod {
  /** e.g. "users.messages.send" */
  name: string;
  httpMethod: string;
  /** e.g. "/gmail/v1/users/{userId}/messages/send" */
  path: string;
  /** The media-upload twin ("/upload/gmail/v1/…"), when the method has one. */
  mediaPath?: string;
}

/**
 * Reads node_modules/@googleapis/gmail/build/v1.js (never imports it: the client is types-only
 * for mailwarden) and pulls each method's HTTP method, url and mediaUrl. The generated file
 * declares resources as `class Resource$Users$Messages {` and methods as
 * `name(paramsOrCallback, optionsOrCallback, callback) {`, each building
 * `url: (rootUrl + '/gmail/v1/…')`, `method: 'POST'` and optionally `mediaUrl: (rootUrl + '/upload/…')`.
 */
export function extractGmailApi(): ApiMethod[] {
  const require = createRequire(import.meta.url);
  const file = join(dirname(require.resolve('@googleapis/gmail')), 'v1.js');
  const source = readFileSync(file, 'utf8');
  const marker =
    /class Resource\$([\w$]+)\s*\{|^\s+(\w+)\(paramsOrCallback, optionsOrCallback, callback\)\s*\{/gm;
  const starts: Array<{ index: number; resource?: string; method?: string }> = [];
  for (const m of source.matchAll(marker)) {
    starts.push(
      m[1] !== undefined ? { index: m.index, resource: m[1] } : { index: m.index, method: m[2] ?? '' },
    );
  }
  const out: ApiMethod[] = [];
  let resource = '';
  for (const [i, start] of starts.entries()) {
    if (start.resource !== undefined) {
      resource = start.resource
        .split('$')
        .map((s) => s.charAt(0).toLowerCase() + s.slice(1))
        .join('.');
      continue;
    }
    const chunk = source.slice(start.index, starts[i + 1]?.index ?? source.length);
    const url = /\burl:\s*\(rootUrl\s*\+\s*'([^']+)'\)/.exec(chunk)?.[1];
    const httpMethod = /\bmethod:\s*'([A-Z]+)'/.exec(chunk)?.[1];
    const mediaPath = /\bmediaUrl:\s*\(rootUrl\s*\+\s*'([^']+)'\)/.exec(chunk)?.[1];
    if (url === undefined || httpMethod === undefined) {
      throw new Error(`extractor could not read ${resource}.${start.method ?? ''}`);
    }
    const entry: ApiMethod = { name: `${resource}.${start.method ?? ''}`, httpMethod, path: url };
    if (mediaPath !== undefined) entry.mediaPath = mediaPath;
    out.push(entry);
  }
  return out;
}

/** Fills `{userId}` with `me` and other path parameters with plausible sample values. */
export function fillPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_all, name: string) => {
    if (name === 'userId') return 'me';
    if (/email|address/i.test(name)) return 'someone@example.com';
    if (name === 'keyPairId') return 'kp-1';
    return '18c0ffee0000abcd';
  });
}
