import { ACCOUNT_TOOLS } from './accounts.js';
import { downloadAttachment, readAttachment } from './attachments.js';
import type { AnyTool } from './common/define.js';
import { ORGANISE_TOOLS } from './bulk/organise-tools.js';
import { exportThread } from './export.js';
import { createDraft, draftReply } from './drafts.js';
import { listFilters, previewFilter } from './filters.js';
import { createFilter, deleteFilter } from './filters-write.js';
import { getProfile, listLabels, whatChanged } from './mailbox-info.js';
import { search } from './search.js';
import { countMoves, listSenderRules } from './policy-info.js';
import { checkNewMailTool, listNewMail, markHandled } from './new-mail.js';
import { listSnoozed, snooze, unsnooze } from './snooze.js';
import { sweepSnoozed } from './snooze-sweep.js';
import { listSubscriptions, listUnsubscribe } from './subscriptions.js';
import { getMessage, getThread } from './thread.js';
import { followUps, triageDigest } from './triage.js';
import { bulkUnsubscribe, unsubscribe } from './unsubscribe.js';

/** Every tool mailwarden defines, grouped by tier (read first), in the order tools/list shows them. */
export const ALL_TOOLS: readonly AnyTool[] = [
  // read
  search,
  getThread,
  getMessage,
  listLabels,
  getProfile,
  whatChanged,
  triageDigest,
  followUps,
  listUnsubscribe,
  listSubscriptions,
  readAttachment,
  listSnoozed,
  listSenderRules,
  countMoves,
  listNewMail,
  checkNewMailTool,
  // manage
  ...ORGANISE_TOOLS,
  snooze,
  unsnooze,
  sweepSnoozed,
  markHandled,
  unsubscribe,
  bulkUnsubscribe,
  downloadAttachment,
  exportThread,
  // filters
  listFilters,
  previewFilter,
  createFilter,
  deleteFilter,
  // drafts (opt-in)
  createDraft,
  draftReply,
  // list_accounts (read) and the opt-in accounts tier
  ...ACCOUNT_TOOLS,
];
