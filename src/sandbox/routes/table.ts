import { insufficientScope } from '../errors.js';
import { draftRoutes } from './drafts.js';
import { filterRoutes } from './filters.js';
import { historyRoutes } from './history.js';
import { labelRoutes } from './labels.js';
import { messageRoutes } from './messages.js';
import { threadRoutes } from './threads.js';
import type { Route } from './types.js';

const refuse = (): never => {
  throw insufficientScope();
};

/**
 * Endpoints that destroy or send mail. The sandbox knows them so a client that calls one gets
 * the answer Gmail gives a gmail.modify token (403 insufficient scopes) instead of a 404 that
 * could be mistaken for a routing bug; nothing is ever deleted or sent.
 */
const refused: Route[] = [
  { verb: 'DELETE', pattern: /^messages\/([^/]+)$/, method: 'messages.delete', handle: refuse },
  { verb: 'DELETE', pattern: /^threads\/([^/]+)$/, method: 'threads.delete', handle: refuse },
  { verb: 'POST', pattern: /^messages\/batchDelete$/, method: 'messages.batchDelete', handle: refuse },
  { verb: 'POST', pattern: /^messages\/send$/, method: 'messages.send', handle: refuse },
  { verb: 'POST', pattern: /^messages\/import$/, method: 'messages.import', handle: refuse },
  { verb: 'POST', pattern: /^messages$/, method: 'messages.insert', handle: refuse },
  { verb: 'POST', pattern: /^drafts\/send$/, method: 'drafts.send', handle: refuse },
];

export const ROUTES: readonly Route[] = [
  ...refused,
  ...labelRoutes,
  ...messageRoutes,
  ...threadRoutes,
  ...historyRoutes,
  ...filterRoutes,
  ...draftRoutes,
];

/** A malformed %-escape is an id no entity has, not a server error. */
function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function findRoute(verb: string, rest: string): { route: Route; ids: string[] } | undefined {
  for (const route of ROUTES) {
    if (route.verb !== verb) continue;
    const m = route.pattern.exec(rest);
    if (m) return { route, ids: m.slice(1).map(decodePathSegment) };
  }
  return undefined;
}
