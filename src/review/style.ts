/* The review page's one stylesheet, served at <base>/style.css (CSP: style-src 'self'). */
export const STYLE = `
:root { color-scheme: light; --ink: #1d232b; --muted: #5b6673; --line: #d9dee5; --bg: #f6f7f9;
  --agent: #3563c9; --rule: #7a4fc0; --refused: #c8541b; --human: #2f8f4e; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
  background: var(--bg); }
header.top { background: #111820; color: #fff; padding: 12px 24px; display: flex; gap: 16px;
  align-items: baseline; flex-wrap: wrap; }
header.top h1 { font-size: 18px; margin: 0; }
header.top .note { color: #b8c2cf; font-size: 13px; }
main { max-width: 1180px; margin: 0 auto; padding: 16px 24px 48px; }
section.account { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 16px 20px;
  margin: 16px 0; }
h2 { font-size: 18px; margin: 0 0 8px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.facts { display: grid; grid-template-columns: repeat(auto-fit, minmax(220px, 1fr)); gap: 8px 16px;
  margin: 8px 0 12px; }
.fact { border-left: 3px solid var(--line); padding: 2px 10px; min-width: 0; overflow-wrap: anywhere; }
.fact b { display: block; font-size: 12px; color: var(--muted); font-weight: 600; }
.big { font-size: 20px; font-weight: 650; }
.muted { color: var(--muted); }
.error { color: #a4262c; }
table { width: 100%; border-collapse: collapse; table-layout: fixed; }
th, td { text-align: left; padding: 4px 6px; border-bottom: 1px solid var(--line); vertical-align: top;
  overflow-wrap: anywhere; word-break: break-word; min-width: 0; }
th { font-size: 12px; color: var(--muted); font-weight: 600; }
col.pick { width: 32px; } col.time { width: 60px; } col.sender { width: 24%; } col.subject { width: 32%; }
col.outcome { width: 22%; } col.rules { width: 110px; }
.call { border: 1px solid var(--line); border-radius: 6px; margin: 10px 0; padding: 8px 10px; }
.call-head { display: flex; flex-wrap: wrap; gap: 4px 14px; align-items: baseline; margin-bottom: 4px;
  overflow-wrap: anywhere; min-width: 0; }
.call-head .tool { font-weight: 650; }
.o-moved { color: var(--ink); } .o-refused { color: var(--refused); } .o-failed { color: #a4262c; }
.o-unknown, .o-pending { color: #9a6b00; font-weight: 600; }
.reason { display: block; color: var(--muted); font-size: 12px; }
.actions { display: flex; gap: 8px; margin-top: 6px; flex-wrap: wrap; }
button { font: inherit; padding: 3px 10px; border-radius: 5px; border: 1px solid #9aa5b1; background: #fff;
  cursor: pointer; }
button.primary { background: var(--agent); color: #fff; border-color: var(--agent); }
details.rules summary { cursor: pointer; color: var(--muted); font-size: 12px; }
details.rules button { display: block; margin: 3px 0; font-size: 12px; padding: 1px 6px; }
form.inline { display: flex; gap: 6px; flex-wrap: wrap; align-items: center; margin-top: 8px; }
input[type=text] { font: inherit; padding: 3px 6px; min-width: 240px; }
svg.chart { width: 100%; max-width: 720px; height: auto; display: block; }
svg .axis { font-size: 10px; fill: var(--muted); }
svg .grid { stroke: var(--line); }
.c-agent { fill: var(--agent); } .c-rule { fill: var(--rule); } .c-refused { fill: var(--refused); }
.c-human { fill: var(--human); }
ul.results { padding-left: 18px; } ul.results li { margin: 4px 0; overflow-wrap: anywhere; }
.status-restored { color: var(--human); font-weight: 650; }
.status-not { color: #a4262c; font-weight: 650; }
code { font-size: 12px; }
@media (max-width: 900px) {
  main { padding: 8px 8px 32px; } section.account { padding: 10px; }
  col.time { width: 44px; } col.rules { width: 84px; } col.outcome { width: 26%; }
}
`;
