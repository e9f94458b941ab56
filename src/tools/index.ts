import type { AnyTool } from './define.js';
import { getProfile, listLabels, whatChanged } from './mailbox-info.js';
import { search } from './search.js';
import { getThread } from './thread.js';

/** Every tool mailwarden defines, in the order tools/list shows them. */
export const ALL_TOOLS: readonly AnyTool[] = [search, getThread, listLabels, getProfile, whatChanged];
