/*
 * tools/list is paid for in context on every session (issue 15: "a lean first contact"), so the
 * JSON Schemas zod emits are compacted before they are advertised.
 *
 * Input schemas are what a model reads to call a tool right; they say every argument, its type,
 * enum, default and numeric bounds, and that unknown arguments are refused
 * (`additionalProperties: false`). They leave out what only a malformed call runs into and the
 * server checks anyway with the same zod schema, answering invalid_input that names the field:
 * string `pattern`, `minLength` and `maxLength`, zod's ±2^53-1 integer bounds, a `false` or `[]`
 * default (what leaving the argument out means anyway), and the inside of an argument marked
 * OPAQUE (a value the model hands back as it got it, such as an undo plan). Input schemas stay
 * inline and typed: several clients hand them to a model API or a converter that does not
 * resolve `$ref` or wants every property typed.
 *
 * Output schemas are not shown to the model by the clients we know (they pass name, description
 * and input schema); clients use them to validate structuredContent, and SDK v1 and v2 compile
 * every one into a validator before the first call. So the advertised output schema is an
 * outline: every top-level field with its type (and enum or const), which ones are always there,
 * and nested objects and arrays as `{type: "object"}` / `{type: "array"}`, without descriptions
 * or bounds. Everything it says is true of every result, so any validator accepts every result;
 * the server checks each result against the full zod schema before sending it. The full shapes,
 * with their field descriptions, are docs/output-schemas.json (npm run gen:docs).
 *
 * In both: `$schema` and `propertyNames: {type: "string"}` (true of every JSON object) are
 * dropped; in outputs also `additionalProperties: false` and `type` beside a `const` or an
 * all-string `enum`. A subschema that occurs more than once in an output schema is written once
 * under a root `$defs` and referred to with `$ref` (JSON Schema 2020-12; ajv, which SDK v1
 * clients use, resolves the same pointer in its draft-07 mode). Only whole subschemas are
 * replaced, so no `$ref` has sibling keywords, and no ref is recursive.
 */

import { OPAQUE } from '../tools/common/define.js';

type Json = unknown;
type Obj = Record<string, Json>;

const isObj = (v: Json): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Keywords whose value is one subschema, or an array or map of them (where $refs may go). */
const ONE = new Set(['items', 'additionalProperties', 'propertyNames', 'not', 'contains']);
const MANY = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
const MAP = new Set(['properties', 'patternProperties', '$defs']);

/** How many levels of an output schema's properties are advertised (see above). */
export const OUTPUT_DEPTH = 1;

/**
 * `outlineDepth` applies to output schemas only: the advertised outline by default, or
 * `Infinity` for the full shape with its descriptions (docs/output-schemas.json).
 */
export function compactSchema(
  schema: Obj,
  isOutput: boolean,
  share = isOutput,
  outlineDepth = OUTPUT_DEPTH,
): Obj {
  const cleaned = clean(schema, isOutput) as Obj;
  const shaped =
    isOutput && Number.isFinite(outlineDepth) ? (outline(cleaned, outlineDepth) as Obj) : cleaned;
  return share ? hoistRepeats(shaped) : shaped;
}

/** Keywords an outline leaves out: they describe or bound a value, never say what kind it is. */
const OUTLINE_DROP = new Set([
  'description',
  'title',
  'pattern',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'default',
]);

/** Keeps `depth` levels of properties; below them an object or array is just its type. */
function outline(s: Json, depth: number): Json {
  if (!isObj(s)) return s;
  if (depth <= 0) {
    if ('properties' in s || s['type'] === 'object') return { type: 'object' };
    if ('items' in s || s['type'] === 'array') return { type: 'array' };
    if ('anyOf' in s || 'oneOf' in s) return {};
  }
  const out: Obj = {};
  for (const [k, x] of Object.entries(s)) {
    if (OUTLINE_DROP.has(k)) continue;
    if (k === 'properties' && isObj(x)) out[k] = mapValues(x, (y) => outline(y, depth - 1));
    else if ((k === 'items' || k === 'additionalProperties') && isObj(x)) out[k] = outline(x, depth);
    else if ((k === 'anyOf' || k === 'oneOf') && Array.isArray(x)) out[k] = x.map((y) => outline(y, depth));
    else out[k] = x;
  }
  return out;
}

/** Input keywords only a malformed call meets; the server's zod check still enforces them. */
const SERVER_CHECKED = new Set(['pattern', 'maxLength', 'minLength']);

function clean(v: Json, isOutput: boolean): Json {
  if (Array.isArray(v)) return v.map((x) => clean(x, isOutput));
  if (!isObj(v)) return v;
  if (v[OPAQUE] === true) {
    const { type, description } = v;
    return isOutput ? { type } : { type, ...(description === undefined ? {} : { description }) };
  }
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === '$schema') continue;
    if (isOutput && k === 'additionalProperties' && x === false) continue;
    if (k === 'propertyNames' && isObj(x) && Object.keys(x).length === 1 && x['type'] === 'string') continue;
    if (isOutput && k === 'type' && typeof x === 'string' && impliedType(v)) continue;
    if (!isOutput && SERVER_CHECKED.has(k) && typeof x !== 'object') continue;
    if (!isOutput && k === 'default' && (x === false || (Array.isArray(x) && x.length === 0))) continue;
    if ((k === 'maximum' || k === 'minimum') && Math.abs(x as number) === Number.MAX_SAFE_INTEGER) continue;
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
