import { filterResource } from '../filters.js';
import type { Route } from './types.js';
import { noContent, ok } from './types.js';

export const filterRoutes: Route[] = [
  {
    verb: 'GET',
    pattern: /^settings\/filters$/,
    method: 'settings.filters.list',
    handle: ({ mailbox, params }) => {
      params.rejectUnknown([]);
      const filters = mailbox.filters.list().map(filterResource);
      // Gmail names the array `filter` and leaves it out when there are none.
      return ok(filters.length > 0 ? { filter: filters } : {});
    },
  },
  {
    verb: 'GET',
    pattern: /^settings\/filters\/([^/]+)$/,
    method: 'settings.filters.get',
    handle: ({ mailbox, params, ids }) => {
      params.rejectUnknown([]);
      return ok(filterResource(mailbox.filters.get(ids[0] ?? '')));
    },
  },
  {
    verb: 'POST',
    pattern: /^settings\/filters$/,
    method: 'settings.filters.create',
    handle: ({ mailbox, params, body }) => {
      params.rejectUnknown([]);
      return ok(filterResource(mailbox.filters.create(body)));
    },
  },
  {
    verb: 'DELETE',
    pattern: /^settings\/filters\/([^/]+)$/,
    method: 'settings.filters.delete',
    handle: ({ mailbox, params, ids }) => {
      params.rejectUnknown([]);
      mailbox.filters.delete(ids[0] ?? '');
      return noContent();
    },
  },
];
