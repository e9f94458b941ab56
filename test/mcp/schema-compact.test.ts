import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AjvJsonSchemaValidator as V1Validator } from '@modelcontextprotocol/sdk/validation/ajv';
import { AjvJsonSchemaValidator as V2Validator } from '@modelcontextprotocol/client/validators/ajv';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/client/validators/cf-worker';
import { compactSchema } from '../../src/mcp/schema-compact.js';
import { toolsListSnapshot } from '../../src/mcp/snapshot.js';
import { ALL_TOOLS } from '../../src/tools/index.js';

type Obj = Record<string, unknown>;
interface Listed {
  name: string;
  inputSchema: Obj;
  outputSchema: Obj;
}

/** ajv 6, the generation several desktop clients still compile tool schemas with. */
const Ajv6 = createRequire(import.meta.url)('ajv') as new (o: object) => {
  compile(s: object): (v: unknown) => boolean;
};

/** Replaces every `$ref` into the root's `$defs` with what it points to, and drops `$defs`. */
function inline(schema: Obj): Obj {
  const defs = (schema['$defs'] ?? {}) as Record<string, Obj>;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const o = v as Obj;
    const ref = o['$ref'];
    if (typeof ref === 'string') {
      const target = defs[ref.replace('#/$defs/', '')];
      if (!target) throw new Error(`dangling ${ref}`);
      return walk(target);
    }
    const out: Obj = {};
    for (const [k, x] of Object.entries(o)) if (k !== '$defs') out[k] = walk(x);
    return out;
  };
  return walk(schema) as Obj;
}

function refs(v: unknown, out: Obj[] = []): Obj[] {
  if (Array.isArray(v)) for (const x of v) refs(x, out);
  else if (v !== null && typeof v === 'object') {
    if ('$ref' in v) out.push(v as Obj);
    for (const x of Object.values(v)) refs(x, out);
  }
  return out;
}

const listing = (await toolsListSnapshot()) as Listed[];
const byName = (name: string): Listed => {
  const t = listing.find((x) => x.name === name);
  if (!t) throw new Error(`${name} is not listed`);
  return t;
};

describe('shared shapes in the full output schemas (docs/output-schemas.json)', () => {
  it('accept exactly what the inline schema accepts: every $ref resolves to the shape it replaced', () => {
    let shared = 0;
    for (const tool of ALL_TOOLS) {
      const raw = z.toJSONSchema(tool.output, { target: 'draft-2020-12', io: 'output' }) as Obj;
      const compact = compactSchema(raw, true, true, Infinity);
      const inlineOnly = compactSchema(raw, true, false, Infinity);
      expect(inline(compact), tool.name).toEqual(inlineOnly);
      expect(JSON.stringify(compact).length, tool.name).toBeLessThanOrEqual(
        JSON.stringify(inlineOnly).length,
      );
      if ('$defs' in compact) shared += 1;
      for (const r of refs(compact)) expect(Object.keys(r), tool.name).toEqual(['$ref']);
      // No definition refers to itself, and none is left unused.
      for (const [name, def] of Object.entries((compact['$defs'] ?? {}) as Record<string, Obj>)) {
        expect(JSON.stringify(def), tool.name).not.toContain(`"#/$defs/${name}"`);
        const { $defs: _defs, ...body } = compact;
        expect(JSON.stringify([body, compact['$defs']]), tool.name).toContain(`"#/$defs/${name}"`);
      }
    }
    expect(shared).toBeGreaterThan(5);
  });

  it('listed input schemas carry no $ref (some clients hand them to a model API unresolved)', () => {
    for (const t of listing) expect(refs(t.inputSchema), t.name).toEqual([]);
  });

  it('drops only keywords that say nothing: type beside an enum of strings or a const in outputs', () => {
    const profile = byName('get_profile').outputSchema as { properties: Record<string, Obj> };
    expect(profile.properties['provider']).toEqual({ enum: ['gmail', 'imap'] });
    const thread = byName('get_thread').inputSchema as { properties: Record<string, Obj> };
    expect(thread.properties['bodies']?.['type']).toBe('string');
    expect(byName('search').inputSchema['additionalProperties']).toBe(false);
    expect(JSON.stringify(listing)).not.toContain('"propertyNames":{"type":"string"}');
    expect(JSON.stringify(listing)).not.toContain('"$schema"');
  });
});

describe('advertised input schemas', () => {
  it('name every argument the tool takes, typed, with its enum, default and numeric bounds', () => {
    for (const tool of ALL_TOOLS) {
      const listed = byName(tool.name).inputSchema as { properties: Record<string, Obj> };
      for (const key of Object.keys(tool.input.shape)) {
        expect(listed.properties[key], `${tool.name}.${key}`).toBeDefined();
        expect(listed.properties[key]?.['type'], `${tool.name}.${key}`).toBeDefined();
      }
    }
    const search = byName('search').inputSchema as { properties: Record<string, Obj> };
    expect(search.properties['maxResults']).toEqual({
      default: 10,
      type: 'integer',
      minimum: 1,
      maximum: 50,
    });
    expect(search.properties['query']?.['default']).toBe('in:inbox');
  });

  it('leave string patterns and lengths to the server, whose own schema still refuses them', () => {
    const archive = byName('archive');
    expect(JSON.stringify(archive.inputSchema)).not.toContain('pattern');
    const tool = ALL_TOOLS.find((t) => t.name === 'archive');
    const parsed = tool?.input.safeParse({ threadId: '../x' });
    expect(parsed?.success).toBe(false);
    expect(parsed?.error?.issues[0]?.path).toEqual(['threadId']);
  });

  it('advertise an undo plan as one object the model passes back, checked in full by the server', () => {
    const undo = byName('undo_bulk_modify').inputSchema as { properties: Record<string, Obj> };
    expect(undo.properties['plan']).toEqual({
      type: 'object',
      description: "bulk_modify's undoPlan, unchanged",
    });
    const tool = ALL_TOOLS.find((t) => t.name === 'undo_bulk_modify');
    expect(tool?.input.safeParse({ plan: { kind: 'mailwarden.undo' } }).success).toBe(false);
  });
});

describe('advertised output schemas are outlines every result satisfies', () => {
  it('list every top-level field with its type and which are always there, nothing nested or described', () => {
    for (const tool of ALL_TOOLS) {
      const out = byName(tool.name).outputSchema as { properties: Record<string, Obj>; required?: string[] };
      const full = z.toJSONSchema(tool.output, { target: 'draft-2020-12', io: 'output' }) as {
        properties: Record<string, unknown>;
        required?: string[];
      };
      expect(Object.keys(out.properties).sort(), tool.name).toEqual(Object.keys(full.properties).sort());
      expect(out.required ?? [], tool.name).toEqual(full.required ?? []);
      for (const [key, field] of Object.entries(out.properties)) {
        expect(field['properties'], `${tool.name}.${key}`).toBeUndefined();
        expect(field['items'], `${tool.name}.${key}`).toBeUndefined();
        expect(field['description'], `${tool.name}.${key}`).toBeUndefined();
      }
    }
  });
});
describe('the validators clients use', () => {
  const modify = byName('modify_labels').outputSchema;
  const raw = z.toJSONSchema(ALL_TOOLS.find((t) => t.name === 'modify_labels')!.output, {
    target: 'draft-2020-12',
    io: 'output',
  }) as Obj;
  const full = compactSchema(raw, true, true, Infinity);
  const good = {
    change: { add: [{ id: 'Label_1', name: 'Work' }], remove: [] },
    createdLabels: [{ id: 'Label_1', name: 'Work' }],
    changed: [{ threadId: 't1', messages: 2 }],
    failed: [],
    notAttempted: [],
    usage: { requests: 2, quotaUnits: 15 },
  };
  // Broken behind a $ref in the full schema; the outline does not look inside the list.
  const badInside = { ...good, createdLabels: [{ id: 'Label_1' }] };
  const badTop = { ...good, changed: 'all of them' };
  const { usage: _usage, ...missing } = good;

  it('the full modify_labels schema shares its label list through $defs', () => {
    expect(refs(full).length).toBeGreaterThan(1);
  });

  const validators: Array<[string, (schema: Obj) => (v: unknown) => boolean]> = [
    ['SDK v1 (ajv 8, draft-07)', (s) => (v) => new V1Validator().getValidator(s)(v).valid],
    ['SDK v2 (ajv 8, 2020-12)', (s) => (v) => new V2Validator().getValidator(s)(v).valid],
    ['SDK v2 cfworker', (s) => (v) => new CfWorkerJsonSchemaValidator().getValidator(s)(v).valid],
    ['ajv 6', (s) => new Ajv6({ allErrors: true }).compile(s)],
  ];
  for (const [name, make] of validators) {
    it(`${name}: compiles every advertised output schema; outline and full schema judge results`, () => {
      for (const t of listing) expect(() => make(t.outputSchema), t.name).not.toThrow();
      const outline = make(modify);
      expect(outline(good)).toBe(true);
      expect(outline(badTop)).toBe(false);
      expect(outline(missing)).toBe(false);
      expect(outline(badInside)).toBe(true);
      const check = make(full);
      expect(check(good)).toBe(true);
      expect(check(badInside)).toBe(false);
    });
  }
});
