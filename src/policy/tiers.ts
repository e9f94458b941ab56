import { envFlag } from '../store/config.js';
import { invalidInput } from '../mail/errors.js';

/**
 * Tiers decide which tools exist and which OAuth scopes are requested (docs/architecture.md, promise 4).
 * `read` is always on; the rest are opt-in.
 */
export const TIERS = ['read', 'manage', 'filters', 'drafts', 'accounts'] as const;
export type Tier = (typeof TIERS)[number];

export const DEFAULT_TIERS: readonly Tier[] = ['read', 'manage'];

/**
 * MAILWARDEN_READONLY=1 means read only and wins over MAILWARDEN_TOOLS; MAILWARDEN_TOOLS is a
 * comma list of tiers ("read,manage,filters"); unset means DEFAULT_TIERS.
 */
export function tiersFromEnv(env: Record<string, string | undefined>): ReadonlySet<Tier> {
  if (envFlag(env, 'MAILWARDEN_READONLY')) return new Set<Tier>(['read']);
  const raw = env['MAILWARDEN_TOOLS'];
  if (raw === undefined || raw.trim() === '') return new Set<Tier>(DEFAULT_TIERS);
  const out = new Set<Tier>(['read']);
  for (const part of raw.split(',')) {
    const name = part.trim().toLowerCase();
    if (name === '') continue;
    if (name === 'all') {
      // drafts and accounts stay opt-in by name: "all" means every tier that works the mailbox.
      for (const t of TIERS) if (t !== 'accounts' && t !== 'drafts') out.add(t);
      continue;
    }
    if (!(TIERS as readonly string[]).includes(name)) {
      throw invalidInput('MAILWARDEN_TOOLS', `unknown tier "${name}"; allowed: ${TIERS.join(', ')}, all`);
    }
    out.add(name as Tier);
  }
  return out;
}

/** Google OAuth scopes a set of tiers needs (least privilege: modify replaces readonly). */
export function scopesForTiers(tiers: ReadonlySet<Tier>): string[] {
  const base = 'https://www.googleapis.com/auth/';
  const scopes = [tiers.has('manage') ? `${base}gmail.modify` : `${base}gmail.readonly`];
  if (tiers.has('filters')) scopes.push(`${base}gmail.settings.basic`);
  if (tiers.has('drafts')) scopes.push(`${base}gmail.compose`);
  return scopes;
}
