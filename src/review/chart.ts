import { html } from './html.js';
import type { Html } from './html.js';
import type { DayCounts } from './log-view.js';

/*
 * The last days as an SVG bar chart drawn on the server: four bars a day (agent moves, rule
 * moves, refusals, human restores). Colours come from the stylesheet by class, so the page needs
 * neither a script nor an inline style.
 */

const SERIES = [
  { key: 'agentMoves', cls: 'c-agent', name: 'agent moves' },
  { key: 'ruleMoves', cls: 'c-rule', name: 'rule moves' },
  { key: 'refusals', cls: 'c-refused', name: 'refusals' },
  { key: 'humanRestores', cls: 'c-human', name: 'your restores' },
] as const;

const W = 720;
const H = 180;
const TOP = 12;
const BOTTOM = 34;
const LEFT = 34;

export function dayChart(days: readonly DayCounts[]): Html {
  const max = Math.max(1, ...days.flatMap((d) => SERIES.map((s) => d[s.key])));
  const plotH = H - TOP - BOTTOM;
  const slot = (W - LEFT) / Math.max(1, days.length);
  const bar = Math.max(2, Math.floor((slot - 6) / SERIES.length));
  const y = (n: number): number => TOP + plotH - Math.round((n / max) * plotH);
  const bars = days.map((d, i) => {
    const x0 = LEFT + i * slot + 3;
    return html`<g
      >${SERIES.map((s, j) => {
        const n = d[s.key];
        return html`<rect
          class="${s.cls}"
          x="${x0 + j * bar}"
          y="${y(n)}"
          width="${bar - 1}"
          height="${TOP + plotH - y(n)}"
          ><title>${d.day}: ${n} ${s.name}</title></rect
        >`;
      })}<text class="axis" x="${x0 + (bar * SERIES.length) / 2}" y="${H - BOTTOM + 14}" text-anchor="middle"
        >${d.day.slice(5)}</text
      ></g
    >`;
  });
  const legend = SERIES.map(
    (s, j) =>
      html`<rect class="${s.cls}" x="${LEFT + j * 150}" y="${H - 12}" width="10" height="10"></rect
        ><text class="axis" x="${LEFT + j * 150 + 14}" y="${H - 3}">${s.name}</text>`,
  );
  const total = (k: (typeof SERIES)[number]['key']): number => days.reduce((n, d) => n + d[k], 0);
  const summary = SERIES.map((s) => `${total(s.key)} ${s.name}`).join(', ');
  return html`<svg
    class="chart"
    viewBox="0 0 ${W} ${H}"
    role="img"
    aria-label="${`last ${days.length} days: ${summary}`}"
  >
    <line class="grid" x1="${LEFT}" y1="${TOP + plotH}" x2="${W}" y2="${TOP + plotH}"></line>
    <text class="axis" x="${LEFT - 6}" y="${TOP + 8}" text-anchor="end">${max}</text>
    <text class="axis" x="${LEFT - 6}" y="${TOP + plotH}" text-anchor="end">0</text>
    ${bars}${legend}
  </svg>`;
}
