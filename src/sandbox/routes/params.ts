import { invalidArgument } from '../errors.js';
import type { ListParams } from '../search.js';

/**
 * Query parameters of one request. Google rejects parameters a method does not define, which
 * catches client typos (`labelId` for `labelIds`), so the sandbox does too.
 */
export class Params {
  constructor(private readonly search: URLSearchParams) {}

  /** System parameters every Google API accepts; the sandbox ignores their effect. */
  private static readonly SYSTEM = new Set([
    'alt',
    'fields',
    'prettyPrint',
    'quotaUser',
    'key',
    '$.xgafv',
    'callback',
    'upload_protocol',
    'uploadType',
  ]);

  rejectUnknown(allowed: readonly string[]): void {
    for (const name of new Set(this.search.keys())) {
      if (!allowed.includes(name) && !Params.SYSTEM.has(name)) {
        throw invalidArgument(
          `Invalid JSON payload received. Unknown name "${name}": Cannot bind query parameter. Field '${name}' could not be found in request message.`,
        );
      }
    }
  }

  string(name: string): string | undefined {
    return this.search.get(name) ?? undefined;
  }

  /** Repeated parameters (`labelIds=A&labelIds=B`); a comma list is one value, as at Google. */
  all(name: string): string[] {
    return this.search.getAll(name).filter((v) => v !== '');
  }

  bool(name: string, fallback: boolean): boolean {
    const v = this.search.get(name);
    if (v === null) return fallback;
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    throw invalidArgument(`Invalid value for ${name}: "${v}"`);
  }

  /** Gmail caps list sizes at the maximum instead of refusing larger values. */
  int(name: string, fallback: number, max: number): number {
    const v = this.search.get(name);
    if (v === null) return fallback;
    if (!/^\d+$/.test(v)) throw invalidArgument(`Invalid value for ${name}: "${v}"`);
    const n = Number(v);
    if (n < 1) throw invalidArgument(`Invalid value for ${name}: "${v}"`);
    return Math.min(n, max);
  }

  oneOf<T extends string>(name: string, choices: readonly T[], fallback: T): T {
    const v = this.search.get(name);
    if (v === null) return fallback;
    const found = choices.find((c) => c === v.toLowerCase());
    if (found === undefined) throw invalidArgument(`Invalid value for ${name}: "${v}"`);
    return found;
  }

  /** threads.list / messages.list share these. */
  list(): ListParams {
    this.rejectUnknown(['q', 'labelIds', 'maxResults', 'pageToken', 'includeSpamTrash']);
    return {
      q: this.string('q'),
      labelIds: this.all('labelIds'),
      includeSpamTrash: this.bool('includeSpamTrash', false),
      maxResults: this.int('maxResults', 100, 500),
      pageToken: this.string('pageToken'),
    };
  }
}

/** `addLabelIds` / `removeLabelIds` of a modify body; Gmail refuses a modify that changes nothing. */
export function readModifyBody(body: unknown): { add: string[]; remove: string[] } {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const list = (key: string): string[] => {
    const v = b[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || !v.every((x): x is string => typeof x === 'string')) {
      throw invalidArgument(`Invalid value for ${key}`);
    }
    return v;
  };
  const add = list('addLabelIds');
  const remove = list('removeLabelIds');
  if (add.length === 0 && remove.length === 0) throw invalidArgument('No label add or removes specified');
  return { add, remove };
}
