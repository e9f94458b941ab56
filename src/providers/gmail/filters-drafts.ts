import type { gmail_v1 } from '@googleapis/gmail';
import { MailError, invalidInput } from '../../mail/errors.js';
import type { FilterCriteria } from '../../mail/filter-criteria.js';
import type { DraftInput, DraftRef, FilterInput, MailFilter } from '../mailbox.js';
import type { GmailClient } from './client.js';
import { ID_SEGMENT } from './endpoints.js';

/**
 * Gmail settings.filters and drafts.create for GmailMailbox, over the same client (and so the
 * same egress checkpoint: filters.create/delete need the filters tier, drafts.create the drafts
 * tier, and a filter body that mentions forwarding is refused before it leaves the process).
 */

const withSignal = (signal: AbortSignal | undefined): { signal?: AbortSignal } =>
  signal === undefined ? {} : { signal };

function toCriteria(c: gmail_v1.Schema$FilterCriteria | undefined): FilterCriteria {
  const out: FilterCriteria = {};
  for (const key of ['from', 'to', 'subject', 'query', 'negatedQuery'] as const) {
    const v = c?.[key];
    if (typeof v === 'string' && v !== '') out[key] = v;
  }
  if (c?.hasAttachment === true) out.hasAttachment = true;
  if (c?.excludeChats === true) out.excludeChats = true;
  if (typeof c?.size === 'number') {
    out.size = c.size;
    out.sizeComparison = c.sizeComparison === 'smaller' ? 'smaller' : 'larger';
  }
  return out;
}

export function toMailFilter(f: gmail_v1.Schema$Filter): MailFilter {
  const action: MailFilter['action'] = {
    addLabelIds: [...(f.action?.addLabelIds ?? [])],
    removeLabelIds: [...(f.action?.removeLabelIds ?? [])],
  };
  const forward = f.action?.forward;
  if (typeof forward === 'string' && forward !== '') action.forward = forward;
  return { id: f.id ?? '', criteria: toCriteria(f.criteria ?? undefined), action };
}

export async function listFilters(client: GmailClient, signal?: AbortSignal): Promise<MailFilter[]> {
  const res = await client.call('filters.list', withSignal(signal));
  return (res?.filter ?? []).map(toMailFilter);
}

/**
 * The request body is built field by field from the typed input, never by spreading it: a value
 * that arrived with extra properties at run time (a `forward` smuggled past the types) has no
 * way onto the wire. The egress checkpoint refuses forwarding bodies as well.
 */
function filterBody(input: FilterInput): gmail_v1.Schema$Filter {
  const c = input.criteria;
  const criteria: gmail_v1.Schema$FilterCriteria = {};
  for (const key of ['from', 'to', 'subject', 'query', 'negatedQuery'] as const) {
    const v = c[key];
    if (v !== undefined && v !== '') criteria[key] = v;
  }
  if (c.hasAttachment === true) criteria.hasAttachment = true;
  if (c.excludeChats === true) criteria.excludeChats = true;
  if (c.size !== undefined) {
    if (!Number.isInteger(c.size) || c.size < 0)
      throw invalidInput('criteria.size', 'must be a whole number of bytes');
    criteria.size = c.size;
    criteria.sizeComparison = c.sizeComparison ?? 'larger';
  }
  const action: gmail_v1.Schema$FilterAction = {};
  for (const [key, ids] of [
    ['addLabelIds', input.action.addLabelIds],
    ['removeLabelIds', input.action.removeLabelIds],
  ] as const) {
    for (const id of ids) {
      if (!ID_SEGMENT.test(id)) throw invalidInput(`action.${key}`, `"${id}" is not a Gmail label id`);
    }
    if (ids.length > 0) action[key] = [...ids];
  }
  if (action.addLabelIds === undefined && action.removeLabelIds === undefined) {
    throw invalidInput('action', 'a filter needs at least one label to add or remove');
  }
  return { criteria, action };
}

export async function createFilter(
  client: GmailClient,
  input: FilterInput,
  signal?: AbortSignal,
): Promise<MailFilter> {
  const res = await client.call('filters.create', { body: filterBody(input), ...withSignal(signal) });
  const created = toMailFilter(res ?? {});
  if (created.id === '')
    throw new MailError('upstream_unavailable', 'filters.create: Gmail answered without a filter id');
  return created;
}

export async function deleteFilter(client: GmailClient, id: string, signal?: AbortSignal): Promise<void> {
  if (!ID_SEGMENT.test(id)) throw invalidInput('filterId', 'is not a Gmail filter id');
  await client.call('filters.delete', { params: { id }, ...withSignal(signal) });
}

export async function createDraft(
  client: GmailClient,
  input: DraftInput,
  signal?: AbortSignal,
): Promise<DraftRef> {
  if (input.threadId !== undefined && !ID_SEGMENT.test(input.threadId)) {
    throw invalidInput('threadId', 'is not a Gmail thread id');
  }
  // drafts.create takes the RFC 822 source base64url-encoded in message.raw (Gmail API reference).
  const message: gmail_v1.Schema$Message = { raw: Buffer.from(input.raw, 'utf8').toString('base64url') };
  if (input.threadId !== undefined) message.threadId = input.threadId;
  const res = await client.call('drafts.create', { body: { message }, ...withSignal(signal) });
  const id = res?.id ?? '';
  const messageId = res?.message?.id ?? '';
  if (id === '' || messageId === '') {
    throw new MailError(
      'upstream_unavailable',
      'drafts.create: Gmail answered without a draft or message id',
    );
  }
  return { id, messageId, threadId: res?.message?.threadId ?? messageId };
}
