import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * `npm run bench` must not rot: its short form (bench/all.mjs --quick: every benchmark once,
 * small, without injected delays) runs here, and each benchmark must have done its work. The
 * numbers are not checked (docs/benchmarks.md records real runs); that they are there is.
 */

function quick(): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [resolve('bench/all.mjs'), '--quick'],
      { encoding: 'utf8', maxBuffer: 64 * 2 ** 20, timeout: 900_000 },
      (e, out, err) => done({ code: e ? ((e as { code?: number }).code ?? 1) : 0, out, err }),
    );
  });
}

describe('npm run bench, short form', () => {
  it('runs every benchmark and each does its work', async () => {
    const r = await quick();
    expect(r.code, r.err.slice(-2000)).toBe(0);
    const out = JSON.parse(r.out) as Record<string, Record<string, unknown>>;
    for (const name of [
      'foundation',
      'bulk',
      'gmail-writes',
      'gmail-instructions',
      'triage',
      'imap',
      'deadlines',
      'imap-writes',
      'new-mail',
      'formats',
      'imap-loop',
      'replicas',
      'lint',
    ])
      expect(out[name], name).toBeTypeOf('object');
    // The bulk move was allowed by the policy the benchmark sets, and moved what it matched.
    const bulk = out['bulk']?.['bulkModify'] as { submitted: number };
    expect(bulk.submitted).toBe(200);
    // The server ran under callgrind and every block of calls was counted (CI installs valgrind).
    const counted = out['gmail-instructions']?.['blocks'] as Array<{
      kind: string;
      millionInstructionsPerCall: number;
    }>;
    expect(counted.map((b) => b.kind)).toEqual([
      'get_profile',
      'modify_labels',
      'get_profile',
      'modify_labels',
    ]);
    for (const b of counted) expect(b.millionInstructionsPerCall).toBeGreaterThan(0);
    // The Bridge loop ran twice and counted its commands.
    const loop = out['imap-loop']?.['loop'] as { steady: { totalCommands: number } };
    expect(loop.steady.totalCommands).toBeGreaterThan(0);
    // Every call through the three replicas behind HAProxy was answered.
    const replicas = out['replicas']?.['threeReplicasBehindHaproxy'] as { calls: number; failed: number };
    expect(replicas.calls).toBeGreaterThan(0);
    expect(replicas.failed).toBe(0);
    // Lint ran from scratch, then again with nothing to do, then on an edited file alone.
    type LintRun = { seconds: number; linted: number; checked: number };
    const lint = (out['lint']?.['rounds'] as Array<Record<string, LintRun>>)[0]!;
    expect(lint['fromScratch']!.linted).toBeGreaterThan(0);
    expect(lint['unchanged']).toMatchObject({ linted: 0, checked: 0 });
    expect(lint['coreSecondEdit']).toMatchObject({ linted: 1, checked: 1 });
  }, 900_000);
});
