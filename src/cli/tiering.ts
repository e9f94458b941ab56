import { setFlagsFromString } from 'node:v8';

/*
 * How soon V8 optimises a function with TurboFan, for this process. Imported first by main.ts, so
 * it is set before the code of any command runs.
 *
 * A tool call runs most of its functions once. With V8's default budget they turn "hot" one after
 * another over the first thousands of calls, and TurboFan's compiles of them were most of the work
 * a call cost: counted in instructions under callgrind, 57 % of a get_profile call and 62 % of a
 * one-thread modify_labels between the 300th and the 700th call of a session
 * (bench/gmail-instructions.mjs; docs/benchmarks.md, "Gmail write path"). With four times the
 * budget most of that code stays in the baseline tiers for hundreds of calls, while code that loops
 * (parsing and rendering a large message, a bulk change over thousands of ids) runs enough
 * bytecode to reach the larger budget within the call: 30 large messages parsed and rendered took
 * the same CPU with either budget, within this machine's noise.
 *
 * Node's documentation warns that a V8 flag changed after start may do nothing, or worse. This one
 * is read each time V8 sets a function's budget, and it takes effect: TurboFan's share of a call's
 * instructions fell from 57–62 % to 11–21 % with the flag set here (10–19 % with it on node's
 * command line), and the whole test suite runs its servers with it.
 *
 * Only on V8 11 (Node 20), where it was measured: a flag V8 does not know is reported on standard
 * output, which is the MCP channel of a stdio server, and later Nodes tier differently (Maglev
 * between the baseline and TurboFan). A budget given on node's command line
 * (`node --interrupt-budget=N main.js`) is left alone.
 */
const INTERRUPT_BUDGET = 4 * 67_584;

/**
 * Sets the budget on V8 11 unless node's own flags (`execArgv`) already name one; says whether it
 * did. `v8`: V8's version, as in `process.versions.v8`.
 */
export function tuneTiering(execArgv: readonly string[], v8: string): boolean {
  if (!v8.startsWith('11.')) return false;
  if (execArgv.some((a) => /^--interrupt[-_]budget(=|$)/.test(a))) return false;
  setFlagsFromString(`--interrupt-budget=${INTERRUPT_BUDGET}`);
  return true;
}

tuneTiering(process.execArgv, process.versions.v8);
