import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from './index.js';

/**
 * A fresh mailwarden config dir for a client of this sandbox: its Desktop-app OAuth client as
 * credentials.json and a refresh token for `address` as tokens/default.json (the legacy
 * plaintext form, which the server reads as it always has). Tests and benchmarks point a built
 * server at it with MAILWARDEN_CONFIG_DIR and MAILWARDEN_SANDBOX_URL.
 */
export function sandboxConfigDir(sandbox: Sandbox, address: string, prefix = 'mailwarden-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const { clientId, clientSecret } = sandbox.oauthClient;
  writeFileSync(
    join(dir, 'credentials.json'),
    JSON.stringify({ installed: { client_id: clientId, client_secret: clientSecret } }),
  );
  mkdirSync(join(dir, 'tokens'));
  writeFileSync(
    join(dir, 'tokens', 'default.json'),
    JSON.stringify({ refresh_token: sandbox.refreshTokenFor(address) }),
  );
  return dir;
}
