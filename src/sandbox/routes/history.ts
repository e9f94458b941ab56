import { invalidArgument } from '../errors.js';
import type { HistoryType } from '../history.js';
import { HISTORY_TYPES } from '../history.js';
import type { Route } from './types.js';
import { ok } from './types.js';

export const historyRoutes: Route[] = [
  {
    verb: 'GET',
    pattern: /^history$/,
    method: 'history.list',
    handle: ({ mailbox, params }) => {
      params.rejectUnknown(['startHistoryId', 'historyTypes', 'labelId', 'maxResults', 'pageToken']);
      const start = params.string('startHistoryId');
      if (start === undefined) throw invalidArgument('Missing required parameter: startHistoryId');
      if (!/^\d+$/.test(start)) throw invalidArgument(`Invalid value for startHistoryId: "${start}"`);
      const types = params.all('historyTypes');
      for (const t of types) {
        if (!(HISTORY_TYPES as readonly string[]).includes(t)) {
          throw invalidArgument(`Invalid value for historyTypes: "${t}"`);
        }
      }
      const pageToken = params.string('pageToken');
      if (pageToken !== undefined && !/^\d+$/.test(pageToken)) throw invalidArgument('Invalid pageToken');
      const labelId = params.string('labelId');
      const page = mailbox.history.list({
        startHistoryId: Number(start),
        ...(types.length > 0 ? { types: new Set(types as HistoryType[]) } : {}),
        ...(labelId === undefined ? {} : { labelId }),
        maxResults: params.int('maxResults', 100, 500),
        ...(pageToken === undefined ? {} : { after: Number(pageToken) }),
      });
      // The current historyId is always present, even on an empty page: clients store it as the next cursor.
      return ok({
        ...(page.history.length > 0 ? { history: page.history } : {}),
        ...(page.nextPageToken === undefined ? {} : { nextPageToken: String(page.nextPageToken) }),
        historyId: String(mailbox.history.historyId),
      });
    },
  },
];
