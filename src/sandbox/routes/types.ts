import type { UserMailbox } from '../model.js';
import type { Params } from './params.js';

export interface RouteContext {
  mailbox: UserMailbox;
  params: Params;
  /** Captured path segments (ids), URL-decoded. */
  ids: string[];
  body: unknown;
  now: number;
  staleThreadIndex: boolean;
}

/** A JSON answer; no body means 204 No Content. */
export interface RouteAnswer {
  status: number;
  body?: unknown;
}

export interface Route {
  verb: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Matched against the path after `/gmail/v1/users/{userId}/`. */
  pattern: RegExp;
  /** Google's method id without `gmail.users.`, e.g. 'messages.batchModify'. */
  method: string;
  handle: (ctx: RouteContext) => RouteAnswer;
}

export const ok = (body: unknown): RouteAnswer => ({ status: 200, body });
export const noContent = (): RouteAnswer => ({ status: 204 });
