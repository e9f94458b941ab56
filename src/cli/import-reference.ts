import { homedir } from 'node:os';
import { join } from 'node:path';
import { isMailError } from '../mail/errors.js';
import type { Env } from '../store/config.js';
import { importReference as runImport } from '../store/reference.js';

export interface ImportOptions {
  env: Env;
  /** The reference server's config dir; default ~/.mailwarden. */
  dir?: string;
  force: boolean;
  print: (line: string) => void;
}

/**
 * `mailwarden import-reference [DIR]`: what users of the reference server already have, moved
 * over. Exit 0 when everything readable was imported (or was already here), 1 when DIR holds
 * nothing to import or something could not be read.
 */
export async function importReference(o: ImportOptions): Promise<number> {
  const dir = o.dir ?? join(o.env['HOME'] ?? homedir(), '.mailwarden');
  let report;
  try {
    report = await runImport(o.env, dir, { force: o.force, now: new Date() });
  } catch (e) {
    const why = isMailError(e) ? e.message : String((e as Error).message ?? e);
    o.print(`import-reference: cannot read ${dir}: ${why}`);
    return 1;
  }
  const c = report.credentials;
  let problems = 0;
  switch (c.outcome) {
    case 'imported':
      o.print(`OAuth client: copied ${c.from} to ${c.to}`);
      break;
    case 'same':
      o.print(`OAuth client: ${c.to} already holds the same client`);
      break;
    case 'exists':
      problems++;
      o.print(`OAuth client: NOT copied — ${c.to} already holds a different client (--force replaces it)`);
      break;
    case 'missing':
      o.print(`OAuth client: none at ${c.from}`);
      break;
    case 'invalid':
      problems++;
      o.print(`OAuth client: NOT copied — ${c.from} ${c.why}`);
      break;
  }
  for (const t of report.tokens) {
    const flag = t.account === 'default' ? '' : ` --account ${t.account}`;
    if (t.outcome === 'imported') {
      o.print(`token ${t.file} → account "${t.account}": imported, ${t.protection}`);
      if (t.account !== 'default')
        o.print(
          `  serve it with --account ${t.account}, or register it: mailwarden accounts add ${t.account}`,
        );
    } else if (t.outcome === 'exists') {
      o.print(
        `token ${t.file} → account "${t.account}": NOT imported — this config already has a token for it (--force replaces it)`,
      );
    } else {
      problems++;
      o.print(
        `token ${t.file} → account "${t.account}": cannot be read (${t.why}). \`mailwarden auth${flag}\` signs in again and creates it.`,
      );
    }
  }
  const imported = report.tokens.filter((t) => t.outcome === 'imported').length;
  if (report.tokens.length === 0) o.print(`tokens: none in ${dir} (token.json, token.<name>.json)`);
  if (c.outcome === 'missing' && report.tokens.length === 0) {
    o.print(`Nothing to import from ${dir}.`);
    return 1;
  }
  if (imported > 0) o.print('Next: `mailwarden check` tests the imported sign-in with one live call.');
  o.print(`The files in ${dir} were left as they are.`);
  return problems > 0 ? 1 : 0;
}
