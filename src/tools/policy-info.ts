import { z } from 'zod';
import { MailError, invalidInput } from '../mail/errors.js';
import { localDay } from '../policy/move-log.js';
import { MOVE_ACTIONS } from '../policy/move-log.js';
import { addDays, dayStart } from '../policy/move-counts.js';
import { defineTool } from './common/define.js';

/*
 * The write policy, read back: list_sender_rules (what the server applies on its own) and
 * count_moves (exact counts from the action log, for a summary that does not estimate).
 */

const DEFAULT_DAYS = 7;

const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'a local day, YYYY-MM-DD')
  .optional();

const units = z.object({ messages: z.number(), threads: z.number() });
const kinds = <T extends z.ZodType>(t: T) =>
  z.object(Object.fromEntries(MOVE_ACTIONS.map((k) => [k, t])) as Record<(typeof MOVE_ACTIONS)[number], T>);

const actor = z.object({
  moved: kinds(units).describe('items moved, by kind: messages (one message) and threads (a whole thread)'),
  messagesOutOfInbox: z.number().describe('messages the moved items took out of the inbox'),
  refused: z.object({ items: z.number(), byRule: z.record(z.string(), z.number()) }),
  failed: z.number(),
  unknown: z
    .object({ items: z.number(), byKind: kinds(z.number()) })
    .describe('writes whose latest log line is pending or unknown: they may or may not have happened'),
});

export const countMoves = defineTool({
  name: 'count_moves',
  title: 'Count moves from the action log',
  tier: 'read',
  access: 'read',
  description:
    "Exact counts of this account's moves from the action log between two local days (from/to, both included; default: the last 7 days): by kind, by actor (rule or agent), refused, failed and unknown outcomes, and the top senders of moves out of the inbox. complete is false when log lines are damaged.",
  input: z.strictObject({
    from: day.describe('first local day (default: 6 days before to)'),
    to: day.describe('last local day (default: today)'),
    top: z.number().int().min(1).max(100).default(10).describe('senders listed'),
  }),
  output: z.object({
    from: z.string(),
    to: z.string(),
    timeZone: z.string(),
    agent: actor,
    rule: actor,
    bySender: z.array(
      z.object({
        sender: z.string().nullable().describe('the From address (from the message); null: none'),
        agent: z.number().describe('items the agent moved out of the inbox'),
        rule: z.number().describe('items the sender rules moved out of the inbox'),
        byKind: z
          .record(z.string(), z.number())
          .describe(
            'every moved item by kind (archive, spam, trash, snooze, restore, label); restores apart',
          ),
      }),
    ),
    senders: z
      .number()
      .describe('distinct senders with moved items in the range (items without a sender count as one)'),
    damagedLines: z.array(z.object({ line: z.number(), problem: z.string() })),
    damagedLineCount: z.number(),
    complete: z.boolean().describe('no damaged line: every count is exact'),
    lines: z.number().describe('log lines read'),
  }),
  async handle(ctx, args) {
    if (ctx.gate === undefined)
      throw new MailError('unsupported', 'this server runs without the write policy and its action log');
    const gate = await ctx.gate();
    const to = args.to ?? localDay(ctx.clock.now(), gate.timeZone);
    const from = args.from ?? addDays(to, -(DEFAULT_DAYS - 1));
    if (dayStart(from) === undefined) throw invalidInput('from', `${from} is not a calendar day`);
    if (dayStart(to) === undefined) throw invalidInput('to', `${to} is not a calendar day`);
    if (from > to) throw invalidInput('from', `${from} is after to (${to})`);
    const counts = await gate.countMoves({ from, to }, args.top);
    return {
      ...counts,
      bySender: counts.bySender.map((s) => ({
        ...s,
        sender: s.sender === null ? null : ctx.fence.wrap(s.sender),
      })),
    };
  },
});

export const listSenderRules = defineTool({
  name: 'list_sender_rules',
  title: 'Show the sender rules',
  tier: 'read',
  access: 'read',
  description:
    "This account's sender rules (policy.json senderRules): addresses and domains (subdomains included) whose inbox mail the server archives or moves to spam, how often it sweeps (sweepRulesEveryMinutes; 0: never), and the file's path. Only editing the file changes them.",
  input: z.strictObject({}),
  output: z.object({
    account: z.string(),
    archive: z.array(z.string()),
    spam: z.array(z.string()),
    sweepRulesEveryMinutes: z.number(),
    sources: z.object({ senderRules: z.string(), sweepRulesEveryMinutes: z.string() }),
    policyPath: z.string(),
    howToChange: z.string(),
  }),
  async handle(ctx) {
    if (ctx.gate === undefined)
      throw new MailError(
        'unsupported',
        'this server runs without the write policy, so it has no sender rules',
      );
    const { policy } = await ctx.gate();
    const { rules, sources, path, account } = policy;
    return {
      account,
      archive: rules.senderRules.archive,
      spam: rules.senderRules.spam,
      sweepRulesEveryMinutes: rules.sweepRulesEveryMinutes,
      sources: { senderRules: sources.senderRules, sweepRulesEveryMinutes: sources.sweepRulesEveryMinutes },
      policyPath: path,
      howToChange: `Sender rules change only by editing ${path} ("senderRules": {"archive": [...], "spam": [...]} under "default" or "accounts" → "${account}"); no tool edits them. The file is read again for every write.`,
    };
  },
});
