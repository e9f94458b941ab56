import { z } from 'zod';
import { MailError, invalidInput, isMailError } from '../../mail/errors.js';
import { shownAs } from '../../mail/fence-format.js';
import type { Label } from '../../mail/types.js';
import type { Gate } from '../../policy/gate.js';
import type { Mailbox } from '../../providers/mailbox.js';
import type { Fence } from '../../mcp/untrusted.js';
import { forgetLabels, shownLabelRef } from './labels-cache.js';

/**
 * Gmail's label colour palette: the only values labels.create/patch accept for backgroundColor
 * and textColor (Gmail API reference, LabelColor). Checked here so a wrong colour is an
 * invalid_input naming the field, not an HTTP 400 after parents were already created.
 */
const PALETTE = `
000000 434343 666666 999999 cccccc efefef f3f3f3 ffffff fb4c2f ffad47 fad165 16a766 43d692 4a86e8
a479e2 f691b3 f6c5be ffe6c7 fef1d1 b9e4d0 c6f3de c9daf8 e4d7f5 fcdee8 efa093 ffd6a2 fce8b3 89d3b2
a0eac9 a4c2f4 d0bcf1 fbc8d9 e66550 ffbc6b fcda83 44b984 68dfa9 6d9eeb b694e8 f7a7c0 cc3a21 eaa041
f2c960 149e60 3dc789 3c78d8 8e63ce e07798 ac2b16 cf8933 d5ae49 0b804b 2a9c68 285bac 653e9b b65775
822111 a46a21 aa8831 076239 1a764d 1c4587 41236d 83334c 464646 e7e7e7 0d3472 b6cff5 0d3b44 98d7e4
3d188e e3d7ff 711a36 fbd3e0 8a1c0a f2b2a8 7a2e0b ffc8af 7a4706 ffdeb5 594c05 fbe983 684e07 fdedc1
0b4f30 b3efd3 04502e a2dcc1 c2c2c2 4986e7 2da2bb b99aff 994a64 f691b2 ff7537 ffad46 662e37 ebdbde
cca6ac 094228 42d692 16a765`;
export const GMAIL_LABEL_COLORS: ReadonlySet<string> = new Set(
  PALETTE.trim()
    .split(/\s+/)
    .map((hex) => `#${hex}`),
);

/** Gmail refuses these in addLabelIds: it sets them itself. */
const NOT_ADDABLE: ReadonlySet<string> = new Set(['DRAFT', 'SENT', 'CHAT']);
/** Gmail's limit on a label name (the whole nested path). */
export const MAX_NAME = 225;
/** A string that can only be meant as an id: mailwarden never creates a label named like this. */
const ID_LIKE = /^(?:Label_\d+|CATEGORY_[A-Z]+)$/;

/** Gmail compares label names without regard to case (labels.create answers 409 on a clash). */
const sameName = (a: string, b: string): boolean => a.trim().toLowerCase() === b.trim().toLowerCase();

export function findByName(labels: readonly Label[], name: string): Label | undefined {
  return labels.find((l) => sameName(l.name, name));
}

export function checkLabelName(field: string, raw: string): string {
  const name = raw.trim();
  if (name === '') throw invalidInput(field, 'a label name must not be empty');
  if (name.length > MAX_NAME) throw invalidInput(field, `"${name}" is longer than ${MAX_NAME} characters`);
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(name))
    throw invalidInput(field, 'a label name must not hold control characters');
  if (name.split('/').some((part) => part.trim() === '')) {
    throw invalidInput(field, `"${name}" has an empty level (nested labels are "Parent/Child")`);
  }
  return name;
}

export type WantedLabel = { kind: 'existing'; label: Label } | { kind: 'create'; name: string };

export interface ResolvedChange {
  add: WantedLabel[];
  remove: Label[];
  /** The mailbox's labels as listed for this resolution. */
  labels: Label[];
}

/**
 * Turns names and ids into labels against the mailbox's label list (kept at most a minute, and
 * forgotten by every label write; a label deleted elsewhere meanwhile makes the write fail with
 * invalid_input and the next call list again). An id or a name (any case) of an existing label is that label;
 * anything else in `add` is a name to create, and in `remove` an error. Nothing is written.
 */
export async function resolveChange(
  mailbox: Mailbox,
  add: readonly string[],
  remove: readonly string[],
  signal?: AbortSignal,
): Promise<ResolvedChange> {
  if (add.length === 0 && remove.length === 0) throw invalidInput('add', 'add or remove at least one label');
  const labels = await mailbox.listLabels(signal);
  const byId = new Map(labels.map((l) => [l.id, l]));
  // A mail-made id or name comes back as a result showed it (fence brackets and invisible
  // characters cleaned: fence-format.ts shownAs), so that form finds the label too.
  const shown = (s: string): Label | undefined =>
    labels.find((l) => shownAs(l.id) === shownAs(s.trim())) ??
    labels.find((l) => sameName(shownAs(l.name), shownAs(s)));
  const lookup = (s: string): Label | undefined => byId.get(s.trim()) ?? findByName(labels, s) ?? shown(s);
  const wanted: WantedLabel[] = [];
  for (const raw of add) {
    const found = lookup(raw);
    if (found !== undefined) {
      if (NOT_ADDABLE.has(found.id)) throw invalidInput('add', `Gmail does not let a client add ${found.id}`);
      if (!wanted.some((w) => w.kind === 'existing' && w.label.id === found.id))
        wanted.push({ kind: 'existing', label: found });
      continue;
    }
    if (ID_LIKE.test(raw.trim())) throw invalidInput('add', `no label has the id ${raw.trim()}`);
    const name = checkLabelName('add', raw);
    if (!wanted.some((w) => w.kind === 'create' && sameName(w.name, name)))
      wanted.push({ kind: 'create', name });
  }
  const removing: Label[] = [];
  for (const raw of remove) {
    const found = lookup(raw);
    if (found === undefined) throw invalidInput('remove', `no label is named or has the id "${raw.trim()}"`);
    if (!removing.some((l) => l.id === found.id)) removing.push(found);
  }
  for (const w of wanted) {
    if (w.kind === 'existing' && removing.some((l) => l.id === w.label.id)) {
      throw invalidInput('remove', `${w.label.name} is both added and removed`);
    }
  }
  return { add: wanted, remove: removing, labels };
}

/** The write policy's judge, when the call has one (ToolContext.gate). */
type GateOf = () => Promise<Gate>;

/**
 * The label called `name`, created if missing, with any missing parents of a nested name
 * ("A/B/C" needs "A" and "A/B": Gmail shows a label as nested only under an existing parent).
 * `known` is updated with what was created. A 409 from a concurrent creator means it exists now.
 * With a `gate`, a label allowedLabels does not list is refused before anything is created; the
 * rule names the label asked for, so the parents an allowed nested label needs come with it.
 */
export async function ensureLabel(
  mailbox: Mailbox,
  name: string,
  known: Label[],
  signal?: AbortSignal,
  gate?: GateOf,
): Promise<{ label: Label; created: Label[] }> {
  const created: Label[] = [];
  const parts = name.split('/').map((p) => p.trim());
  // Checked before any parent is made, so a refused nested name leaves nothing behind.
  if (
    parts.length > 1 &&
    mailbox.capabilities.flatLabels === true &&
    findByName(known, parts.join('/')) === undefined
  )
    throw invalidInput(
      'name',
      `"${name}": this account's labels cannot nest (the server answers "a label cannot have children"); choose a name without "/"`,
    );
  if (gate !== undefined && findByName(known, parts.join('/')) === undefined)
    (await gate()).checkLabelCreate(parts.join('/'));
  let label: Label | undefined;
  for (const part of parts) {
    // Each level hangs under its parent as the parent is actually spelled ("work/x" → "Work/x"),
    // since Gmail nests by the exact name.
    const path = label === undefined ? part : `${label.name}/${part}`;
    label = findByName(known, path);
    if (label !== undefined) continue;
    try {
      label = await mailbox.createLabel({ name: path }, signal);
      created.push(label);
    } catch (e) {
      if (!(isMailError(e) && e.code === 'invalid_input')) throw e;
      label = findByName(await mailbox.listLabels(signal), path);
      if (label === undefined) throw e;
    }
    known.push(label);
  }
  if (created.length > 0) forgetLabels(mailbox);
  if (label === undefined) throw new MailError('internal_error', `label "${name}" could not be resolved`);
  return { label, created };
}

export interface AppliedChange {
  add: Label[];
  remove: Label[];
  created: Label[];
}

/**
 * Creates the labels a resolved change still lacks; call only once nothing else can refuse the
 * write. With a `gate`, every name is checked against allowedLabels before the first is created.
 */
export async function materialize(
  mailbox: Mailbox,
  resolved: ResolvedChange,
  signal?: AbortSignal,
  gate?: GateOf,
): Promise<AppliedChange> {
  const known = [...resolved.labels];
  const creating = resolved.add.flatMap((w) => (w.kind === 'create' ? [w.name] : []));
  if (gate !== undefined && creating.length > 0) {
    const g = await gate();
    for (const name of creating) g.checkLabelCreate(name);
  }
  const add: Label[] = [];
  const created: Label[] = [];
  for (const w of resolved.add) {
    if (w.kind === 'existing') {
      add.push(w.label);
      continue;
    }
    const made = await ensureLabel(mailbox, w.name, known, signal, gate);
    add.push(made.label);
    created.push(...made.created);
  }
  return { add, remove: resolved.remove, created };
}

export const labelRef = z.object({ id: z.string(), name: z.string() });
/** A label as a result shows it: mail-made ids and names fenced (labels-cache.ts shownLabelRef). */
export const ref =
  (fence: Fence) =>
  (l: Label): { id: string; name: string } =>
    shownLabelRef(fence, l);
