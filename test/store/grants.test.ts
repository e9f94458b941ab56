import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildRuntime } from '../../src/cli/runtime.js';
import { isMailError } from '../../src/mail/errors.js';
import { enabledTools } from '../../src/mcp/server.js';
import { narrowTiers, scopesCoverTier } from '../../src/policy/grants.js';
import type { Tier } from '../../src/policy/tiers.js';
import { GmailClient } from '../../src/providers/gmail/client.js';
import { loopbackTransport } from '../../src/providers/gmail/transport.js';
import { DEMO_ADDRESS, demoCorpus } from '../../src/sandbox/corpus/index.js';
import { Sandbox } from '../../src/sandbox/index.js';
import { tiersGrantedAt } from '../../src/store/tokens.js';
import { tempDir } from '../helpers/temp.js';

const AUTH = 'https://www.googleapis.com/auth/';
const ALL: ReadonlySet<Tier> = new Set(['read', 'manage', 'filters', 'drafts']);
const silent = { info: () => undefined, warn: () => undefined };

describe('narrowing tiers by granted scopes', () => {
  it('keeps exactly the tiers one of the granted scopes serves', () => {
    expect([...narrowTiers(ALL, [`${AUTH}gmail.readonly`]).tiers]).toEqual(['read']);
    expect(narrowTiers(ALL, [`${AUTH}gmail.modify`])).toEqual({
      tiers: new Set(['read', 'manage', 'drafts']),
      dropped: ['filters'],
    });
    expect(narrowTiers(ALL, [`${AUTH}gmail.modify`, `${AUTH}gmail.settings.basic`]).dropped).toEqual([]);
    // Google grants filters.create to gmail.settings.basic alone, not to mail.google.com.
    expect(scopesCoverTier('filters', ['https://mail.google.com/'])).toBe(false);
    expect(scopesCoverTier('accounts', [])).toBe(true);
  });

  it('leaves the tiers alone when there is no token or it does not record its scopes', async () => {
    const dir = tempDir('mailwarden-grants-');
    const path = join(dir, 'tokens', 'default.json');
    expect((await tiersGrantedAt(path, ALL)).tiers).toBe(ALL);
    mkdirSync(join(dir, 'tokens'));
    writeFileSync(path, JSON.stringify({ refresh_token: 'legacy' }));
    expect((await tiersGrantedAt(path, ALL)).tiers).toBe(ALL);
  });

  it('at start-up, a tier the stored token was not granted is not listed', async () => {
    const dir = tempDir('mailwarden-grants-');
    mkdirSync(join(dir, 'tokens'));
    writeFileSync(
      join(dir, 'tokens', 'default.json'),
      JSON.stringify({
        version: 1,
        address: DEMO_ADDRESS,
        scopes: [`${AUTH}gmail.readonly`],
        issuedAt: new Date().toISOString(),
        protection: 'none',
        refresh_token: 'x',
      }),
    );
    const warnings: unknown[] = [];
    const built = await buildRuntime({
      demo: false,
      env: { MAILWARDEN_CONFIG_DIR: dir, MAILWARDEN_TOOLS: 'read,manage,filters' },
      log: { ...silent, warn: (_m, fields) => warnings.push(fields) },
    });
    try {
      expect([...built.runtime.tiers]).toEqual(['read']);
      const tiers = new Set(enabledTools(built.runtime.tools, built.runtime.tiers).map((t) => t.tier));
      expect([...tiers]).toEqual(['read']);
      expect(warnings).toEqual([{ account: 'default', tiers: ['manage', 'filters'] }]);
    } finally {
      await built.close();
    }
  });
});

describe('when the scopes are unknown, Google refuses with insufficient_scope', () => {
  it('names the missing scope and the tier that requests it', async () => {
    const sandbox = await Sandbox.start({ users: [demoCorpus()] });
    try {
      const client = new GmailClient({
        credentials: {
          ...sandbox.oauthClient,
          refreshToken: sandbox.issueRefreshToken(DEMO_ADDRESS, ['gmail.readonly']),
        },
        tiers: new Set(['read', 'manage']),
        transport: loopbackTransport(sandbox.url),
      });
      const err = await client.call('labels.create', { body: { name: 'X' } }).catch((e: unknown) => e);
      expect(isMailError(err) && err.code).toBe('insufficient_scope');
      expect((err as Error).message).toContain(`${AUTH}gmail.modify`);
      expect((err as Error).message).toContain('"manage" tier');
      expect((err as Error).message).toContain('mailwarden auth');
    } finally {
      await sandbox.close();
    }
  });
});
