import type { EffectivePolicy } from '../policy/write-policy.js';
import { dayChart } from './chart.js';
import { html } from './html.js';
import type { Html } from './html.js';
import type { DayCounts, LogCall, LogItem, LogView } from './log-view.js';
import { DESTINATION, undoable } from './log-view.js';
import { localTime, outcomeText, safeLine, shortCall } from './text.js';
import type { UndoOutcome } from './undo.js';

/*
 * The review page, rendered on the server. Every value goes through html`` (src/review/html.ts),
 * so strings from mail, the log and policy.json are text wherever they land; mail strings are
 * first made one short, visible line (safeLine) and isolated with <bdi>, so right-to-left text
 * cannot reorder the columns around it. There is no script.
 */

export interface AccountSummary {
  account: string;
  provider?: string;
  timeZone: string;
  today: string;
  view: LogView;
  days: DayCounts[];
  cap: number;
  usedToday: number;
  /** A person-readable description of the new-mail mark, or undefined when there is none. */
  mark?: string;
  policy?: EffectivePolicy;
  /** Protected correspondents learnt from Sent, or why the count is not known. */
  correspondents?: { addresses: number; refreshedAt?: string } | { error: string };
  /** Why part of the summary could not be read (the log, the policy). */
  problems: string[];
}

export interface PageContext {
  /** The path the page is served under ("/review" or ""). */
  base: string;
  csrf: string;
  demo: boolean;
}

/** Calls shown per section (newest first); older ones are counted, not listed. */
const MAX_CALLS = 40;

const mail = (s: string | undefined, max?: number): Html =>
  s === undefined || s === ''
    ? html`<span class="muted">(none)</span>`
    : html`<bdi>${safeLine(s, max)}</bdi>`;

function layout(ctx: PageContext, title: string, body: Html): string {
  return `<!doctype html>${html`<html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="same-origin" />
      <title>${title}</title>
      <link rel="stylesheet" href="${ctx.base}/style.css" />
    </head>
    <body>
      <header class="top">
        <h1>mailwarden review</h1>
        <span class="note"
          >what the agent did, and putting back what it should not have
          moved${ctx.demo ? ' — demo sandbox mailbox' : ''}</span
        >
      </header>
      <main>${body}</main>
    </body>
  </html>`}`;
}

function itemRow(item: LogItem, ctx: PageContext, timeZone: string): Html {
  const id = item.ids[0] ?? '';
  const value = `${item.unit}:${id}`;
  const why =
    item.outcome === 'refused'
      ? html`<span class="reason">${safeLine(item.reason, 300)}</span>`
      : item.error !== undefined
        ? html`<span class="reason">${safeLine(item.error, 160)}</span>`
        : '';
  const rule =
    item.senderRule === undefined
      ? ''
      : html`<span class="reason">rule: ${safeLine(item.senderRule, 60)}</span>`;
  const sender = item.sender;
  const rules =
    sender === undefined
      ? ''
      : html`<details class="rules">
          <summary>sender…</summary>
          ${(
            [
              ['archive', 'always archive'],
              ['spam', 'always spam'],
              ['neverMove', 'never move'],
            ] as const
          ).map(
            ([list, label]) =>
              html`<button
                type="submit"
                formaction="${ctx.base}/sender"
                name="rule"
                value="${`${list} ${sender}`}"
              >
                ${label}
              </button>`,
          )}
        </details>`;
  return html`<tr data-outcome="${item.outcome}">
    <td>
      ${undoable(item) ? html`<input type="checkbox" name="item" value="${value}" aria-label="choose this item" />` : ''}
    </td>
    <td>${localTime(item.at, timeZone).slice(11)}</td>
    <td>${mail(sender)}</td>
    <td>${mail(item.subject)}</td>
    <td class="o-${item.outcome}">
      ${outcomeText(item)}${item.outcome === 'moved' || item.action === 'restore' ? '' : html` <span class="muted">(to ${DESTINATION[item.action]})</span>`}${why}${rule}
    </td>
    <td>${rules}</td>
  </tr>`;
}

function callBlock(c: LogCall, account: string, ctx: PageContext, timeZone: string): Html {
  const undo = c.items.filter(undoable).length;
  const counts = new Map<string, number>();
  for (const i of c.items) counts.set(outcomeText(i), (counts.get(outcomeText(i)) ?? 0) + 1);
  const summary = [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
  return html`<form class="call" method="post" action="${ctx.base}/restore">
    <input type="hidden" name="csrf" value="${ctx.csrf}" /><input
      type="hidden"
      name="account"
      value="${account}"
    />${c.call === undefined ? '' : html`<input type="hidden" name="call" value="${c.call}" />`}
    <div class="call-head">
      <span class="tool">${safeLine(c.tool, 40)}</span><span>${localTime(c.at, timeZone)}</span
      ><span class="muted">${c.actor}</span><span class="muted">call ${shortCall(c.call)}</span
      ><span>${summary}</span>
    </div>
    <table>
      <colgroup>
        <col class="pick" />
        <col class="time" />
        <col class="sender" />
        <col class="subject" />
        <col class="outcome" />
        <col class="rules" />
      </colgroup>
      <thead>
        <tr>
          <th></th>
          <th>time</th>
          <th>sender</th>
          <th>subject</th>
          <th>outcome</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        ${c.items.map((i) => itemRow(i, ctx, timeZone))}
      </tbody>
    </table>
    ${undo > 0 ? html`<div class="actions"><button type="submit" name="scope" value="chosen">Restore chosen</button>${c.call === undefined ? '' : html`<button type="submit" class="primary" name="scope" value="call">Restore the whole call (${undo})</button>`}</div>` : ''}
  </form>`;
}

function section(
  title: string,
  calls: readonly LogCall[],
  account: string,
  ctx: PageContext,
  tz: string,
  empty: string,
): Html {
  const shown = calls.slice(0, MAX_CALLS);
  return html`<h3>${title}</h3>
    ${shown.length === 0 ? html`<p class="muted">${empty}</p>` : shown.map((c) => callBlock(c, account, ctx, tz))}${calls.length > shown.length ? html`<p class="muted">${calls.length - shown.length} older calls not listed; <code>mailwarden log</code> shows them all.</p>` : ''}`;
}

function policyFacts(p: EffectivePolicy | undefined, s: AccountSummary): Html {
  if (p === undefined) return html``;
  const r = p.rules;
  const corr =
    s.correspondents === undefined
      ? 'off'
      : 'error' in s.correspondents
        ? `not known (${s.correspondents.error})`
        : `${s.correspondents.addresses} addresses`;
  const list = (xs: readonly string[]): string => (xs.length === 0 ? '(none)' : xs.join(', '));
  return html`<div class="facts">
    <div class="fact">
      <b>rules in effect</b>inbox-only moves ${r.inboxOnlyMoves ? 'on' : 'off'}; protect correspondents
      ${r.protectCorrespondents ? 'on' : 'off'}; cap confirmation ${r.capConfirmation}; labels
      ${r.allowedLabels === null ? 'any' : list(r.allowedLabels)}
    </div>
    <div class="fact"><b>protected correspondents</b>${corr}</div>
    <div class="fact">
      <b>sender rules</b>archive: ${list(r.senderRules.archive)}<br />spam: ${list(r.senderRules.spam)}<br />never
      move: ${list(r.neverMove)}
    </div>
    <div class="fact"><b>policy file</b><code>${p.path}</code></div>
  </div>`;
}

export function accountSection(s: AccountSummary, ctx: PageContext): Html {
  const calls = s.view.calls;
  const agent = calls.filter((c) => c.actor === 'agent');
  const rule = calls.filter((c) => c.actor === 'rule');
  const human = calls.filter((c) => c.actor === 'human');
  const unknownItems = calls.flatMap((c) =>
    c.items.filter((i) => i.outcome === 'unknown' || i.outcome === 'pending'),
  );
  const unknownCalls: LogCall[] =
    unknownItems.length === 0
      ? []
      : [
          {
            account: s.account,
            tool: 'various',
            actor: 'agent',
            at: unknownItems[0]?.at ?? 0,
            items: unknownItems,
          },
        ];
  const left = s.cap === 0 ? 'no cap' : `${Math.max(0, s.cap - s.usedToday)} left`;
  return html`<section class="account" id="${`account-${s.account}`}">
    <h2>${s.account}${s.provider === undefined ? '' : html` <span class="muted">(${s.provider})</span>`}</h2>
    ${s.problems.map((p) => html`<p class="error">${p}</p>`)}
    <div class="facts">
      <div class="fact">
        <b>agent moves out of the inbox today (${s.today}, ${s.timeZone})</b
        ><span class="big" data-testid="cap-used">${s.usedToday}</span>
        ${s.cap === 0 ? '' : html`of ${s.cap}`} — <span data-testid="cap-left">${left}</span>
      </div>
      <div class="fact"><b>new-mail mark (what the agent has already seen)</b>${s.mark ?? 'none yet'}</div>
      <div class="fact">
        <b>log</b>${s.view.lines}
        lines${s.view.damagedCount > 0 ? html`; <span class="error">${s.view.damagedCount} damaged (first: line ${s.view.damaged[0]?.line ?? '?'}, ${s.view.damaged[0]?.problem ?? ''})</span>` : ''}
      </div>
    </div>
    ${policyFacts(s.policy, s)}
    <h3>Last ${s.days.length} days</h3>
    ${dayChart(s.days)}${section('Agent actions, by call (newest first)', agent, s.account, ctx, s.timeZone, 'The agent has moved nothing in these days.')}${section('Rule moves', rule, s.account, ctx, s.timeZone, 'No sender rule moved anything in these days.')}${section('Outcome unknown (the write may or may not have happened)', unknownCalls, s.account, ctx, s.timeZone, 'None.')}${section('Your restores', human, s.account, ctx, s.timeZone, 'None in these days.')}
    <h3>Add a sender to a list</h3>
    <form class="inline" method="post" action="${ctx.base}/sender">
      <input type="hidden" name="csrf" value="${ctx.csrf}" /><input
        type="hidden"
        name="account"
        value="${s.account}"
      /><input
        type="text"
        name="sender"
        placeholder="someone@example.com or example.com"
        aria-label="sender address or domain"
        required
        maxlength="254"
      /><select name="list" aria-label="list">
        <option value="archive">always archive</option>
        <option value="spam">always spam</option>
        <option value="neverMove">never move</option></select
      ><button type="submit">Add</button>
    </form>
  </section>`;
}

export function reviewPage(summaries: readonly AccountSummary[], ctx: PageContext): string {
  return layout(ctx, 'mailwarden review', html`${summaries.map((s) => accountSection(s, ctx))}`);
}

export function resultPage(
  ctx: PageContext,
  title: string,
  lines: ReadonlyArray<{ ok: boolean; text: Html | string }>,
): string {
  return layout(
    ctx,
    title,
    html`<section class="account">
      <h2>${title}</h2>
      <ul class="results">
        ${lines.map((l) => html`<li class="${l.ok ? 'status-restored' : 'status-not'}">${l.text}</li>`)}
      </ul>
      <p><a href="${`${ctx.base}/`}">Back to the review page</a></p>
    </section>`,
  );
}

export function undoLines(results: readonly UndoOutcome[]): Array<{ ok: boolean; text: Html }> {
  return results.map((r) => ({
    ok: r.status === 'restored',
    text: html`${r.status}: ${r.unit} from ${mail(r.sender)}
    “${mail(r.subject)}”${r.why === undefined ? '' : html` — ${r.why}`}`,
  }));
}

export function messagePage(ctx: PageContext, title: string, text: string): string {
  return layout(
    ctx,
    title,
    html`<section class="account">
      <h2>${title}</h2>
      <p>${text}</p>
      <p><a href="${`${ctx.base}/`}">Back to the review page</a></p>
    </section>`,
  );
}
