import { memoryPreviewStore } from '../../store/preview-tokens.js';
import type { PreviewStore } from '../../store/preview-tokens.js';
import type { ToolContext } from '../common/define.js';

/**
 * Preview tokens pin the exact message set a dry run showed, so the write that follows touches
 * only what the user saw. A server keeps them in its state (src/store/preview-tokens.ts: files
 * under the state dir, or the PostgreSQL state), so the write may reach another replica than the
 * dry run did. A context built without one (unit tests, snapshots) keeps them in this process.
 */
const local = memoryPreviewStore();

export function previewsOf(ctx: ToolContext): PreviewStore {
  return ctx.previews ?? local;
}
