import type { AnyTool } from '../common/define.js';
import { createLabel } from '../labels.js';
import {
  archive,
  markRead,
  markUnread,
  modifyLabels,
  moveToSpam,
  restore,
  trash,
  untrash,
} from '../modify.js';
import { bulkModify } from './bulk-modify.js';
import { undoBulkModify } from './undo.js';

/** The "organise the mailbox" tools (tier manage), in the order tools/list shows them. */
export const ORGANISE_TOOLS: readonly AnyTool[] = [
  createLabel,
  modifyLabels,
  archive,
  markRead,
  markUnread,
  trash,
  untrash,
  moveToSpam,
  restore,
  bulkModify,
  undoBulkModify,
];
