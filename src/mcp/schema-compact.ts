/*
 * tools/list is paid for in context on every session (issue 15: "a lean first contact"), so the
 * JSON Schemas zod emits are compacted before they are advertised — without changing which values
 * they accept:
 * - `$schema` says nothing a client needs; in output schemas `additionalProperties: false`
 *   neither (the server writes the output and checks it with zod). Input schemas keep it: a
 *   client may rely on it to know an unknown argument is refused, and the server does refuse it.
 * - `propertyNames: {type: "string"}` holds for every JSON object, so it is dropped.
 * - In output schemas `type` next to a `const`, or next to an `enum` of strings only, repeats
 *   what the value already says. Input schemas keep it (some clients translate input schemas for
 *   their model and want every property typed).
 * - In output schemas, a subschema that occurs more than once is written once under a root
 *   `$defs` and referred to with `$ref` (JSON Schema 2020-12; ajv, which SDK v1 clients use,
 *   resolves the same pointer in its draft-07 mode). Only whole subschemas are replaced, so no
 *   `$ref` has sibling keywords (their meaning differs between drafts), and no ref is recursive.
 *   Input schemas stay inline: several clients hand them to a model API or a converter that
 *   does not resolve `$ref`, and a tool that cannot be called is worse than a longer listing.
 */

type Json = unknown;
type Obj = Record<string, Json>;

const isObj = (v: Json): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Keywords whose value is one subschema, or an array or map of them (where $refs may go). */
const ONE = new Set(['items', 'additionalProperties', 'propertyNames', 'not', 'contains']);
const MANY = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
const MAP = new Set(['properties', 'patternProperties', '$defs']);

export function compactSchema(schema: Obj, isOutput: boolean, share = isOutput): Obj {
  const cleaned = clean(schema, isOutput) as Obj;
  return share ? hoistRepeats(cleaned) : cleaned;
}

function clean(v: Json, isOutput: boolean): Json {
  if (Array.isArray(v)) return v.map((x) => clean(x, isOutput));
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === '$schema') continue;
    if (isOutput && k === 'additionalProperties' && x === false) continue;
    if (k === 'propertyNames' && isObj(x) && Object.keys(x).length === 1 && x['type'] === 'string') continue;
    if (isOutput && k === 'type' && typeof x === 'string' && impliedType(v)) continue;
    out[k] = MAP.has(k) && isObj(x) ? mapValues(x, (s) => clean(s, isOutput)) : clean(x, isOutput);
  }
  return out;
}

/** `const` or an all-string `enum` already fixes the type (the checks above keep the rest). */
function impliedType(s: Obj): boolean {
  if ('const' in s) return typeof s['type'] === 'string' && typeof s['const'] === s['type'];
  const e = s['enum'];
  return s['type'] === 'string' && Array.isArray(e) && e.length > 0 && e.every((x) => typeof x === 'string');
}

function mapValues(o: Obj, f: (v: Json) => Json): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(o)) out[k] = f(v);
  return out;
}

/** Calls `visit` on every subschema below the root, with the property name it sits under. */
function eachSubschema(root: Obj, visit: (s: Obj, name: string | undefined) => void): void {
  const walk = (s: Json, name: string | undefined, isRoot: boolean): void => {
    if (!isObj(s)) return;
    if (!isRoot) visit(s, name);
    for (const [k, x] of Object.entries(s)) {
      if (ONE.has(k)) walk(x, name, false);
      else if (MANY.has(k) && Array.isArray(x)) for (const y of x) walk(y, name, false);
      else if (MAP.has(k) && isObj(x)) for (const [p, y] of Object.entries(x)) walk(y, p, k === '$defs');
    }
  };
  walk(root, undefined, true);
}

function replaceSubschemas(root: Obj, key: string, ref: Obj): Obj {
  const walk = (s: Json, isRoot: boolean): Json => {
    if (!isObj(s)) return s;
    if (!isRoot && JSON.stringify(s) === key) return ref;
    const out: Obj = {};
    for (const [k, x] of Object.entries(s)) {
      if (ONE.has(k)) out[k] = walk(x, false);
      else if (MANY.has(k) && Array.isArray(x)) out[k] = x.map((y) => walk(y, false));
      else if (MAP.has(k) && isObj(x)) out[k] = mapValues(x, (y) => walk(y, k === '$defs'));
      else out[k] = x;
    }
    return out;
  };
  return walk(root, true) as Obj;
}

/**
 * Greedy: hoist the repeated subschema that saves the most characters, then look again (a shape
 * inside a hoisted one may still repeat elsewhere), until nothing repeated is worth a `$ref`.
 */
function hoistRepeats(schema: Obj): Obj {
  if ('$ref' in schema) return schema;
  let root = schema;
  for (;;) {
    const seen = new Map<string, { count: number; names: Set<string | undefined> }>();
    eachSubschema(root, (s, name) => {
      if ('$ref' in s && Object.keys(s).length === 1) return;
      const key = JSON.stringify(s);
      const entry = seen.get(key);
      if (entry) {
        entry.count += 1;
        entry.names.add(name);
      } else seen.set(key, { count: 1, names: new Set([name]) });
    });
    const defs = isObj(root['$defs']) ? root['$defs'] : {};
    let best: { key: string; name: string; saving: number } | undefined;
    for (const [key, { count, names }] of seen) {
      if (count < 2) continue;
      // Named after the property it sits under when every use agrees; otherwise neutrally.
      const [only] = names;
      const defName = freeName(defs, names.size === 1 && only !== undefined ? only : 'shared');
      const refLength = `{"$ref":"#/$defs/${defName}"}`.length;
      // Each use shrinks to a $ref; the shape itself is written once more under $defs.
      const saving = count * (key.length - refLength) - (key.length + defName.length + 3);
      if (saving > 0 && (!best || saving > best.saving)) best = { key, name: defName, saving };
    }
    if (!best) return root;
    const replaced = replaceSubschemas(root, best.key, { $ref: `#/$defs/${best.name}` });
    const { $defs: oldDefs, ...rest } = replaced;
    const next = {
      ...rest,
      $defs: { ...(isObj(oldDefs) ? oldDefs : {}), [best.name]: JSON.parse(best.key) as Obj },
    };
    // The estimate leaves out the `$defs` wrapper: keep a step only if it really is shorter.
    if (JSON.stringify(next).length >= JSON.stringify(root).length) return root;
    root = next;
  }
}

function freeName(defs: Obj, base: string): string {
  const clean = base.replace(/[^A-Za-z0-9_]/g, '') || 'shape';
  if (!(clean in defs)) return clean;
  for (let i = 2; ; i++) if (!(`${clean}${i}` in defs)) return `${clean}${i}`;
}
