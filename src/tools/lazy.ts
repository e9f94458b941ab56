import type * as Summary from '../mail/summary.js';

/**
 * The MIME, charset and HTML stack (iconv-lite, html-to-text, htmlparser2, the CSS engine) takes about
 * 70 ms to load, a quarter of a cold start. Tools load it on their first call, so a client's
 * tools/list never waits for it (cold start is a benchmarked target: docs/benchmarks.md).
 */
export const mailReaders = (): Promise<typeof Summary> => import('../mail/summary.js');
