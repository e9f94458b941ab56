import { z } from 'zod';
import { invalidInput } from '../mail/errors.js';
import { defineTool } from './common/define.js';
import { forgetLabels } from './common/labels-cache.js';

import {
  GMAIL_LABEL_COLORS,
  MAX_NAME,
  checkLabelName,
  ensureLabel,
  findByName,
} from './common/label-changes.js';

const color = (field: string) =>
  z
    .string()
    .transform((s) => s.trim().toLowerCase())
    .refine((s) => GMAIL_LABEL_COLORS.has(s), {
      message: `${field} must be one of Gmail's label palette colours (e.g. #4a86e8, #ffffff; see the Gmail API LabelColor reference)`,
    });

export const createLabel = defineTool({
  name: 'create_label',
  title: 'Create a label',
  tier: 'manage',
  access: 'write',
  description:
    'Create a label, idempotently: an existing name (any case) is returned. "Parent/Child" creates missing parents. backgroundColor and textColor (together) must be Gmail palette colours; they apply to an existing label too.',
  input: z
    .strictObject({
      name: z.string().min(1).max(MAX_NAME),
      backgroundColor: color('backgroundColor').optional(),
      textColor: color('textColor').optional(),
    })
    .superRefine((v, ctx) => {
      if ((v.backgroundColor === undefined) !== (v.textColor === undefined)) {
        const missing = v.backgroundColor === undefined ? 'backgroundColor' : 'textColor';
        ctx.addIssue({
          code: 'custom',
          path: [missing],
          message: 'Gmail needs backgroundColor and textColor together',
        });
      }
    }),
  output: z.object({
    label: z.object({
      id: z.string(),
      name: z.string(),
      type: z.enum(['system', 'user']),
      color: z.object({ backgroundColor: z.string(), textColor: z.string() }).optional(),
    }),
    created: z.boolean().describe('false when a label of that name already existed'),
    createdParents: z.array(z.string()),
    colorChanged: z.boolean(),
  }),
  async handle(ctx, args) {
    const name = checkLabelName('name', args.name);
    const known = await ctx.mailbox.listLabels(ctx.signal);
    const existing = findByName(known, name);
    const wantColor =
      args.backgroundColor !== undefined && args.textColor !== undefined
        ? { backgroundColor: args.backgroundColor, textColor: args.textColor }
        : undefined;
    if (existing?.type === 'system' && wantColor !== undefined) {
      throw invalidInput('name', `${existing.name} is a system label; Gmail does not colour system labels`);
    }
    const made = existing
      ? { label: existing, created: [] }
      : await ensureLabel(ctx.mailbox, name, known, ctx.signal, ctx.gate);
    let label = made.label;
    const same =
      label.color?.backgroundColor.toLowerCase() === wantColor?.backgroundColor &&
      label.color?.textColor.toLowerCase() === wantColor?.textColor;
    const colorChanged = wantColor !== undefined && !same;
    if (colorChanged) {
      label = await ctx.mailbox.updateLabel(label.id, { color: wantColor }, ctx.signal);
      forgetLabels(ctx.mailbox);
    }
    return {
      label: {
        id: label.id,
        name: label.name,
        type: label.type,
        ...(label.color ? { color: label.color } : {}),
      },
      created: existing === undefined,
      createdParents: made.created.filter((l) => l.id !== made.label.id).map((l) => l.name),
      colorChanged,
    };
  },
});
