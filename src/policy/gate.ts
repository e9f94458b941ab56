import { randomUUID } from 'node:crypto';
import type { Clock } from '../mail/clock.js';
import type { MailPlace } from '../mail/types.js';
import { PLACE_NAMES, placeOf, placeOfSource } from '../mail/place.js';
import type { ThreadPlace } from '../mail/place.js';
import { systemClock } from '../mail/clock.js';
import { MailError, invalidInput } from '../mail/errors.js';
import { parseAddressList } from '../mail/headers.js';
import type { Env } from '../store/config.js';
import type { ActionLog } from './action-log.js';
import type { CorrespondentCheck } from './correspondents.js';
import { OUT_ACTIONS, localDay, moveRecord, movesToday, serverTimeZone } from './move-cap.js';
import { readMarker, writeMarker } from './move-marker.js';
import type { MoveAction, MoveActor, MoveOutcome, MoveRecord, MoveRecordInput } from './move-cap.js';
import { countMoves } from './move-counts.js';
import type { DayRange, MoveCounts } from './move-counts.js';
import { standingMoveRefusal } from './standing-moves.js';
import { withWriteLock } from './write-lock.js';
import type { WriteLockOptions } from './write-lock.js';
import { labelAllowed, senderRuleMatches } from './write-policy.js';
import type { EffectivePolicy, PolicyRules } from './write-policy.js';

/**
 * The per-item judge of the write policy (docs/architecture.md, "The write policy"): each
 * item of a call is judged on its own; a move the daily cap counts is judged under the account's
 * write lock, with the day's count of agent moves read from the action log inside that lock; and
 * every item — refused ones too — gets its line in the log.
 */

/** One thing a tool wants to change, as it stands now (live labels, not an index's). */
export interface GateItem {
  id: string;
  kind: 'message' | 'thread';
  /** Messages of the item that leave the inbox (a thread's messages carrying INBOX). */
  messageCount: number;
  /** The From address; undefined when the message has none. */
  sender: string | undefined;
  /** The raw From header (for a thread: every message's From, joined with ", "). */
  senderHeader: string;
  subject?: string;
  messageId?: string;
  labelIds: readonly string[];
  /**
   * Where it is (src/mail/place.ts): a thread's place comes from its messages (threadPlace); a
   * message without one is placed from labelIds.
   */
  place?: ThreadPlace;
  /** IMAP: the copies it moves, by folder, UIDVALIDITY and UID (recorded in the log). */
  places?: readonly MailPlace[];
  /** actor "rule": the sender rule that matched this item (overrides the intent's senderRule). */
  senderRule?: string;
}

export interface GateIntent {
  tool: string;
  action: MoveAction;
  actor: MoveActor;
  /** restore: where the tool restores from (TRASH, SPAM, or ARCHIVE), narrowing the allowed sources. */
  fromLabelIds?: readonly string[];
  /** label: label names to apply (the caller resolves ids to names). */
  addLabels?: readonly string[];
  removeLabels?: readonly string[];
  /** label: names of IMAP user folders the change adds or removes (a move, not a label). */
  folders?: readonly string[];
  /** actor "rule": the sender rule that matched, for the record (an item's own wins). */
  senderRule?: string;
}

export type PolicyRule =
  'inbox-only' | 'protected-correspondent' | 'no-sender' | 'daily-cap' | 'allowed-labels' | 'never-move';

export interface Verdict {
  id: string;
  verdict: 'allowed' | 'refused';
  rule?: PolicyRule;
  reason?: string;
}

/** What the write callback reports per allowed item. A missing item reads as "unknown". */
export interface PerItemOutcome {
  id: string;
  outcome: 'moved' | 'failed' | 'unknown';
  error?: string;
}

export interface GateResult {
  id: string;
  outcome: 'moved' | 'refused' | 'failed' | 'unknown';
  rule?: PolicyRule;
  reason?: string;
  error?: string;
}

export interface GateRun {
  results: GateResult[];
  /** Agent moves left today after this call; null when the cap is off or does not count this call. */
  remainingToday: number | null;
  /** What `write` threw, if it did; its items are "unknown". */
  writeError?: unknown;
}

export interface CapOptions {
  /** A human confirmed (elicitation) lifting the cap for this call; ignored if policy forbids. */
  capLifted?: boolean;
  /**
   * The tool call this judging belongs to: whether Sent changed is asked once per call, so the
   * preview (judge) and the run of one call share one check.
   */
  call?: object;
}

/** The three things the policy needs from storage; a shared backend can replace the files. */
export interface PolicyStore {
  /** Names the record it keeps (the log's path), so what a process remembered of it stays its own. */
  readonly id?: string;
  append(records: readonly MoveRecord[]): Promise<void>;
  /** Messages the account's agent moved out of the inbox on the local day of `now`. */
  movesToday(account: string, now: number, timeZone: string): Promise<number>;
  /** Keeps the day's count where losing the log cannot reset it (move-marker.ts); under the lock. */
  noteMovesToday?(account: string, now: number, timeZone: string, used: number): Promise<void>;
  withLock<T>(account: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** Exact counts of the account's move records between two local days (count_moves); reads only. */
  countMoves?(account: string, range: DayRange, timeZone: string, top: number): Promise<MoveCounts>;
}

/** The files: the action log and a lock directory per account in the config dir. */
export function filePolicyStore(env: Env, log: ActionLog, lock: WriteLockOptions = {}): PolicyStore {
  return {
    id: log.path,
    append: (records) => log.appendMany(records),
    async movesToday(account, now, tz) {
      const counted = await movesToday(log, account, now, tz);
      const marker = await readMarker(log.path, account);
      const same = marker !== undefined && marker.day === counted.day && marker.timeZone === tz;
      return Math.max(counted.used, same ? marker.moves : 0);
    },
    async noteMovesToday(account, now, tz, used) {
      const day = localDay(now, tz);
      const at = new Date(now).toISOString();
      await writeMarker(log.path, { version: 1, account, day, timeZone: tz, moves: used, updatedAt: at });
    },
    withLock: (account, fn) => withWriteLock(env, account, fn, lock),
    countMoves: (account, range, tz, top) => countMoves(log, account, range, tz, top),
  };
}

export interface GateOptions {
  policy: EffectivePolicy;
  store: PolicyStore;
  /** Needed when protectCorrespondents is on and a move out is judged. */
  correspondents?: CorrespondentCheck;
  clock?: Clock;
  timeZone?: string;
}

export interface Gate {
  readonly account: string;
  readonly rules: PolicyRules;
  /** The effective policy the rules come from, with policy.json's path and each rule's source. */
  readonly policy: EffectivePolicy;
  /** The zone whose local days the cap (and count_moves) count in. */
  readonly timeZone: string;
  /** Exact counts from the action log (see move-counts.ts). */
  countMoves(range: DayRange, top: number): Promise<MoveCounts>;
  /** Whether a human confirmation may lift the cap (capConfirmation: allowed, and a cap set). */
  readonly canLiftCap: boolean;
  /** Agent moves left today; null when the cap is off. */
  remaining(): Promise<number | null>;
  /**
   * Before the judging reads: learns (or checks) what the rules will need, so the reads and the
   * write that follow keep their selected folder (IMAP). Optional to call; judge and run do it too.
   */
  prepare(intent: GateIntent, call?: object): Promise<void>;
  /** A preview outside the lock; run() judges again inside it. */
  judge(items: readonly GateItem[], intent: GateIntent, options?: CapOptions): Promise<Verdict[]>;
  /** Throws when `count` agent moves out would exceed today's remainder; returns the remainder. */
  preflightBulk(count: number, options?: CapOptions): Promise<number | null>;
  run(
    items: readonly GateItem[],
    intent: GateIntent,
    write: (allowed: GateItem[], signal: AbortSignal) => Promise<PerItemOutcome[]>,
    options?: CapOptions,
  ): Promise<GateRun>;
  /** Throws forbidden_operation when allowedLabels does not list the name. */
  checkLabelCreate(name: string): void;
  /**
   * A filter whose action keeps mail out of the inbox (standing-moves.ts): whether it needs a
   * person (inboxOnlyMoves), and why the agent may not create it at all, if it may not.
   */
  judgeStandingMove(from: string | undefined): Promise<{ needsPerson: boolean; refusal?: string }>;
}

/** Labels that say where a message is; changing them is a move, which only the move actions judge. */
const LOCATIONS: ReadonlySet<string> = new Set(['INBOX', 'SPAM', 'TRASH', 'DRAFT', 'SENT']);

/** Where an item is: the one answer every route asks (src/mail/place.ts). */
export function place(item: GateItem): ThreadPlace {
  return item.place ?? placeOf({ labelIds: item.labelIds });
}

/** Messages an item takes out of the inbox: what the cap counts (one message, or a thread's). */
export function moveCount(item: GateItem): number {
  return item.kind === 'message' ? 1 : Math.max(1, Math.floor(item.messageCount));
}

type Refusal = { verdict: 'refused'; rule: PolicyRule; reason: string };
const refuse = (rule: PolicyRule, reason: string): Refusal => ({ verdict: 'refused', rule, reason });

/** Every rule but the cap, for one item. Reasons hold only server-made text, never mail's. */
async function judgeRules(
  policy: EffectivePolicy,
  item: GateItem,
  intent: GateIntent,
  correspondents: CorrespondentCheck | undefined,
): Promise<Refusal | undefined> {
  const { rules, path } = policy;
  const where = place(item);
  if (OUT_ACTIONS.has(intent.action)) {
    if (rules.inboxOnlyMoves && where !== 'inbox')
      return refuse(
        'inbox-only',
        `the agent moves mail out of the inbox only (inboxOnlyMoves), and this ${item.kind} is in ${PLACE_NAMES[where]}`,
      );
    const fromHeader = parseAddressList(item.senderHeader).map((a) => a.address);
    const list = [item.sender ?? '', ...fromHeader].map((a) => a.trim()).filter((a) => a.includes('@'));
    const kept =
      intent.actor === 'human'
        ? undefined
        : rules.neverMove.find((r) => list.some((a) => senderRuleMatches(r, a)));
    if (kept !== undefined)
      return refuse(
        'never-move',
        `its sender is on the never-move list (neverMove: ${kept}) in ${path}, so neither the agent nor a rule moves it out of the inbox`,
      );
    if (!rules.protectCorrespondents) return undefined;
    if (list.length === 0)
      return refuse(
        'no-sender',
        'it has no sender address, so the policy cannot tell whether it is from a correspondent; it stays in the inbox',
      );
    if (!correspondents)
      throw new MailError('internal_error', 'the write policy has no list of correspondents');
    for (const a of new Set(list))
      if (await correspondents.has(a))
        return refuse(
          'protected-correspondent',
          `its sender is a protected correspondent (in To or Cc of mail sent from this account in the last ${rules.correspondentsDays} days), so it stays in the inbox; the user can move it, or set protectCorrespondents to false in ${path}`,
        );
    return undefined;
  }
  if (intent.action === 'restore') {
    const from = intent.fromLabelIds?.map(placeOfSource).filter((p) => p !== undefined);
    const sources = from ?? (['archive', 'spam', 'trash'] as const);
    const ok = (sources as readonly ThreadPlace[]).includes(where);
    if (ok || !rules.inboxOnlyMoves) return undefined;
    const named = sources.map((p) => PLACE_NAMES[p]).join(', ');
    const hint = where === 'mixed' ? '; restore its messages one by one (messageIds) from where each is' : '';
    return refuse(
      'inbox-only',
      `the agent restores to the inbox only from ${named} (inboxOnlyMoves), and this ${item.kind} is in ${PLACE_NAMES[where]}${hint}`,
    );
  }
  const touched = [
    ...[...(intent.addLabels ?? []), ...(intent.removeLabels ?? [])].filter((l) => LOCATIONS.has(l)),
    ...(intent.folders ?? []),
  ];
  if (touched.length > 0)
    return refuse(
      'inbox-only',
      `a label change cannot move mail (${touched.join(', ')}); archive, spam, trash, snooze and restore do, and the policy judges them`,
    );
  const denied = (intent.addLabels ?? []).find((l) => !labelAllowed(rules, l));
  if (denied !== undefined)
    return refuse(
      'allowed-labels',
      `the agent may apply only the labels in allowedLabels (${(rules.allowedLabels ?? []).join(', ') || 'none'}) in ${path}; ${JSON.stringify(denied)} is not one of them`,
    );
  return undefined;
}

export function createGate(options: GateOptions): Gate {
  const { policy, store } = options;
  const { rules, account, path } = policy;
  const cap = rules.dailyMoveCap;
  const clock = options.clock ?? systemClock;
  const tz = options.timeZone ?? serverTimeZone();
  const canLiftCap = rules.capConfirmation === 'allowed' && cap > 0;
  const lifted = (o: CapOptions | undefined): boolean => canLiftCap && o?.capLifted === true;
  const capped = (intent: GateIntent): boolean =>
    cap > 0 && intent.actor === 'agent' && OUT_ACTIONS.has(intent.action);
  const raise = (): string =>
    `To allow more, raise dailyMoveCap in ${path} (for this account only: {"accounts": {"${account}": {"dailyMoveCap": N}}}) or wait until tomorrow${canLiftCap ? '; or the user can confirm this one call to lift the cap' : ''}.`;
  const left = (n: number): string =>
    `${n} of ${cap} agent moves out of the inbox ${n === 1 ? 'is' : 'are'} left today (${tz})`;
  const used = async (now: number): Promise<number> => (cap > 0 ? store.movesToday(account, now, tz) : 0);

  /** `budget`: the day's remainder, or null when the cap does not apply to this call. */
  async function judgeAll(
    items: readonly GateItem[],
    intent: GateIntent,
    budget: number | null,
  ): Promise<Verdict[]> {
    const seen = new Set<string>();
    for (const it of items) {
      if (seen.has(it.id)) throw invalidInput('ids', `${JSON.stringify(it.id)} is listed twice`);
      seen.add(it.id);
    }
    let spent = false;
    const out: Verdict[] = [];
    for (const item of items) {
      const no = await judgeRules(policy, item, intent, options.correspondents);
      if (no) {
        out.push({ id: item.id, ...no });
        continue;
      }
      if (budget !== null) {
        const need = moveCount(item);
        // In the order given: once one does not fit, the rest wait too, so "the first N" holds.
        if (spent || need > budget) {
          spent = true;
          const more = need > 1 ? `; this thread needs ${need}` : '';
          out.push({ id: item.id, ...refuse('daily-cap', `${left(budget)}${more}. ${raise()}`) });
          continue;
        }
        budget -= need;
      }
      out.push({ id: item.id, verdict: 'allowed' });
    }
    return out;
  }

  return {
    account,
    rules,
    policy,
    timeZone: tz,
    canLiftCap,
    async countMoves(range, top) {
      if (store.countMoves === undefined)
        throw new MailError('unsupported', 'this policy store cannot count moves');
      return store.countMoves(account, range, tz, top);
    },
    async remaining() {
      return cap === 0 ? null : Math.max(0, cap - (await used(clock.now())));
    },
    async prepare(intent, call) {
      if (rules.protectCorrespondents && OUT_ACTIONS.has(intent.action))
        await options.correspondents?.warm?.(call);
    },
    async judge(items, intent, o) {
      if (rules.protectCorrespondents && OUT_ACTIONS.has(intent.action) && items.length > 0)
        await options.correspondents?.warm?.(o?.call);
      const on = capped(intent) && !lifted(o);
      return judgeAll(items, intent, on ? Math.max(0, cap - (await used(clock.now()))) : null);
    },
    async preflightBulk(count, o) {
      if (cap === 0) return null;
      const rest = Math.max(0, cap - (await used(clock.now())));
      if (count > rest && !lifted(o))
        throw new MailError(
          'forbidden_operation',
          `this change would move ${count} messages out of the inbox, but ${left(rest)}; nothing was moved. ${raise()}`,
          { retryable: false },
        );
      return rest;
    },
    async judgeStandingMove(from) {
      if (!rules.inboxOnlyMoves) return { needsPerson: false };
      const refusal = await standingMoveRefusal(policy, from, options.correspondents);
      return refusal === undefined ? { needsPerson: true } : { needsPerson: true, refusal };
    },
    checkLabelCreate(name) {
      if (!labelAllowed(rules, name))
        throw new MailError(
          'forbidden_operation',
          `the agent may create only the labels in allowedLabels (${(rules.allowedLabels ?? []).join(', ') || 'none'}) in ${path}; ${JSON.stringify(name)} is not one of them. Nothing was created.`,
          { retryable: false },
        );
    },
    run: async (items, intent, write, o) => {
      // Learning the Sent folder can take seconds; do it before other writers have to wait.
      if (rules.protectCorrespondents && OUT_ACTIONS.has(intent.action) && items.length > 0)
        await options.correspondents?.warm?.(o?.call);
      // The lock exists for the daily count (write-lock.ts): a write the cap does not apply to
      // (a label change, a restore, a person's own move, a sender rule's move, or any move with the
      // cap off) reads no count and writes no marker, so it runs without it and never waits behind a move.
      const counted = capped(intent);
      const locked = <T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> =>
        counted ? store.withLock(account, fn) : fn(new AbortController().signal);
      return locked(async (signal) => {
        const now = clock.now();
        const liftedCap = lifted(o);
        // Read only when the cap applies, so a damaged log stops moves out but not an undo.
        const before = capped(intent) ? await used(now) : 0;
        const on = capped(intent) && !liftedCap;
        const verdicts = await judgeAll(items, intent, on ? Math.max(0, cap - before) : null);
        const call = randomUUID();
        const rec = (item: GateItem, outcome: MoveOutcome, extra: Partial<MoveRecordInput>, at: number) =>
          moveRecord({
            account,
            tool: intent.tool,
            action: intent.action,
            actor: intent.actor,
            unit: item.kind,
            ids: [item.id],
            count: OUT_ACTIONS.has(intent.action) ? moveCount(item) : 0,
            call,
            time: new Date(at).toISOString(),
            ...defined({
              messageId: item.messageId,
              places: item.places?.length ? item.places.map((p) => ({ ...p })) : undefined,
              sender: item.sender,
              subject: item.subject,
              senderRule: item.senderRule ?? intent.senderRule,
              capLiftedBy: liftedCap && capped(intent) ? ('human' as const) : undefined,
            }),
            ...extra,
            outcome,
          });
        const allowed = items.filter((_, i) => verdicts[i]?.verdict === 'allowed');
        // Intent lines go in before the provider write: a crash mid-write leaves them "pending",
        // and pending counts, so no crash hands out moves the log does not know about.
        await store.append(
          items.flatMap((item, i) => {
            const v = verdicts[i] as Verdict;
            if (v.verdict === 'allowed') return [rec(item, 'pending', {}, now)];
            if (intent.actor === 'rule' && !firstRuleRefusal(store.id ?? '', account, item, intent, v))
              return [];
            return [rec(item, 'refused', defined({ refusedBy: v.rule, reason: v.reason }), now)];
          }),
        );
        const got = new Map<string, PerItemOutcome>();
        let writeError: unknown;
        if (allowed.length > 0) {
          try {
            for (const r of await write(allowed, signal)) got.set(r.id, r);
          } catch (e) {
            writeError = e;
          }
        }
        const thrown = writeError === undefined ? undefined : errorText(writeError);
        const finals = allowed.map((item) => {
          const r = thrown === undefined ? got.get(item.id) : undefined;
          return { item, outcome: r?.outcome ?? 'unknown', error: thrown ?? r?.error };
        });
        const done = clock.now();
        try {
          await store.append(finals.map((f) => rec(f.item, f.outcome, defined({ error: f.error }), done)));
        } catch (e) {
          const moved = finals.filter((f) => f.outcome === 'moved').length;
          throw new MailError(
            'internal_error',
            `the change ran (${moved} of ${finals.length} done) but its outcome could not be added to the action log (${errorText(e)}); its intent lines are there, so the daily count holds`,
            { cause: e, retryable: false },
          );
        }
        const byId = new Map(finals.map((f) => [f.item.id, f]));
        const results = verdicts.map((v): GateResult => {
          const f = byId.get(v.id);
          if (f === undefined)
            return { id: v.id, outcome: 'refused', ...defined({ rule: v.rule, reason: v.reason }) };
          return { id: v.id, outcome: f.outcome, ...defined({ error: f.error }) };
        });
        const added = capped(intent)
          ? finals.filter((f) => f.outcome !== 'failed').reduce((n, f) => n + moveCount(f.item), 0)
          : 0;
        const remainingToday = capped(intent) ? Math.max(0, cap - before - added) : null;
        // The log holds the count already; a marker that cannot be written only weakens the
        // protection against losing the log, so it does not turn done moves into an error.
        if (capped(intent) && added > 0)
          await store.noteMovesToday?.(account, now, tz, before + added).catch(() => undefined);
        return { results, remainingToday, ...(writeError === undefined ? {} : { writeError }) };
      });
    },
  };
}

/**
 * A rule's refusal is logged once per message and process (README "Sender rules"): a protected
 * correspondent's mail stays in the inbox, and every sweep would otherwise add its line again.
 * Remembered per process, bounded (the oldest forgotten first).
 */
const ruleRefusals = new Set<string>();
const MAX_RULE_REFUSALS = 10_000;

function firstRuleRefusal(
  log: string,
  account: string,
  item: GateItem,
  intent: GateIntent,
  v: Verdict,
): boolean {
  const key = [
    log,
    account,
    item.messageId ?? item.id,
    item.senderRule ?? intent.senderRule ?? '',
    v.rule,
  ].join('\u0000');
  if (ruleRefusals.has(key)) return false;
  ruleRefusals.add(key);
  if (ruleRefusals.size > MAX_RULE_REFUSALS)
    ruleRefusals.delete(ruleRefusals.values().next().value as string);
  return true;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The keys whose values are defined (exactOptionalPropertyTypes forbids explicit undefined). */
function defined<T extends Record<string, unknown>>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
