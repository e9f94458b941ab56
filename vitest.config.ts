import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Reports mailwarden-* temp dirs left behind by the run (it cannot fail it: see the file).
    globalSetup: ['test/global-temp-check.ts'],
    // The JSON report is what .ci/run turns into its closing "N passed, N failed" line.
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/vitest-report.json' },
  },
});
