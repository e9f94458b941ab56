import type { Tier } from './tiers.js';

const AUTH = 'https://www.googleapis.com/auth/';
/**
 * Any one of these scopes lets a tier's endpoints run (Google's per-method "Authorization
 * scopes" lists): gmail.modify covers reading and drafts, mail.google.com covers all but
 * filters.create, which Google grants to gmail.settings.basic alone.
 */
const TIER_SCOPES: Readonly<Record<Tier, readonly string[]>> = {
  read: [`${AUTH}gmail.readonly`, `${AUTH}gmail.modify`, 'https://mail.google.com/'],
  manage: [`${AUTH}gmail.modify`, 'https://mail.google.com/'],
  filters: [`${AUTH}gmail.settings.basic`],
  drafts: [`${AUTH}gmail.compose`, `${AUTH}gmail.modify`, 'https://mail.google.com/'],
  accounts: [],
};

/** Whether a set of granted scopes lets a tier's calls through. */
export function scopesCoverTier(tier: Tier, granted: readonly string[]): boolean {
  const any = TIER_SCOPES[tier];
  return any.length === 0 || any.some((s) => granted.includes(s));
}

/**
 * The enabled tiers the token's granted scopes can serve. A tier Google would refuse is not
 * listed rather than failing on every call; the user may have unticked a scope on the consent
 * screen (granular consent) or enabled a tier after signing in.
 */
export function narrowTiers(
  tiers: ReadonlySet<Tier>,
  granted: readonly string[],
): { tiers: Set<Tier>; dropped: Tier[] } {
  const kept = new Set<Tier>();
  const dropped: Tier[] = [];
  for (const t of tiers) {
    if (scopesCoverTier(t, granted)) kept.add(t);
    else dropped.push(t);
  }
  return { tiers: kept, dropped };
}
