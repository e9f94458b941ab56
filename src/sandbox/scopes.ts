/** Google's OAuth scopes for Gmail, and which API methods each one lets a token call. */
export const SCOPE = {
  full: 'https://mail.google.com/',
  modify: 'https://www.googleapis.com/auth/gmail.modify',
  readonly: 'https://www.googleapis.com/auth/gmail.readonly',
  labels: 'https://www.googleapis.com/auth/gmail.labels',
  settingsBasic: 'https://www.googleapis.com/auth/gmail.settings.basic',
  compose: 'https://www.googleapis.com/auth/gmail.compose',
} as const;

/** What `Sandbox.refreshTokenFor` grants: everything mailwarden's widest tier asks for. */
export const DEFAULT_SCOPES: readonly string[] = [SCOPE.modify, SCOPE.settingsBasic, SCOPE.compose];

/** Accepts Google's full scope URLs or the short `gmail.modify` form tests find easier to write. */
export function normalizeScope(scope: string): string {
  if (/^https?:\/\//.test(scope)) return scope;
  return `https://www.googleapis.com/auth/${scope}`;
}

const READS = [
  'getProfile',
  'labels.list',
  'labels.get',
  'threads.list',
  'threads.get',
  'messages.list',
  'messages.get',
  'messages.attachments.get',
  'history.list',
  'settings.filters.list',
  'settings.filters.get',
];
const LABEL_WRITES = ['labels.create', 'labels.update', 'labels.patch', 'labels.delete'];
const MESSAGE_WRITES = [
  'threads.modify',
  'threads.trash',
  'threads.untrash',
  'messages.modify',
  'messages.batchModify',
  'messages.trash',
  'messages.untrash',
];

/**
 * Method → scopes that allow it, after Google's per-method "Authorization scopes" lists. Methods
 * absent here (delete, send, insert, import…) are allowed to no scope the sandbox issues
 * except mail.google.com, and even then the sandbox refuses them (see routes/table.ts).
 */
const ALLOWED: ReadonlyMap<string, ReadonlySet<string>> = (() => {
  const map = new Map<string, Set<string>>();
  const allow = (methods: readonly string[], ...scopes: string[]): void => {
    for (const m of methods) {
      const set = map.get(m) ?? new Set<string>([SCOPE.full]);
      for (const s of scopes) set.add(s);
      map.set(m, set);
    }
  };
  allow(READS, SCOPE.readonly, SCOPE.modify);
  allow(['getProfile'], SCOPE.compose);
  allow(['labels.list', 'labels.get', ...LABEL_WRITES], SCOPE.labels);
  allow(LABEL_WRITES, SCOPE.modify);
  allow(MESSAGE_WRITES, SCOPE.modify);
  allow(['settings.filters.list', 'settings.filters.get'], SCOPE.settingsBasic);
  allow(['settings.filters.create', 'settings.filters.delete'], SCOPE.settingsBasic);
  // drafts.create: Google lists gmail.compose and gmail.modify (and mail.google.com).
  allow(['drafts.create'], SCOPE.compose, SCOPE.modify);
  return map;
})();

export function scopeAllows(granted: ReadonlySet<string>, method: string): boolean {
  const allowed = ALLOWED.get(method);
  if (!allowed) return false;
  for (const s of granted) if (allowed.has(s)) return true;
  return false;
}
