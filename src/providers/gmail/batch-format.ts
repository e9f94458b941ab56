import { contentTypeOf, parseRawMessage } from '../../mail/mime.js';

/**
 * Google's batch wire format (Gmail API guide "Batching requests"): one `multipart/mixed` body
 * whose parts are `Content-Type: application/http`, each holding one whole HTTP message (a
 * request going out, its response coming back), paired by Content-ID (`<id>` out,
 * `<response-id>` back, since Google may answer the calls in any order). Pure: the client,
 * its egress checkpoint and the sandbox all read and write it through these functions.
 */

/** Gmail's batch path; the inner calls all go to the Gmail API (Google: one API per batch). */
export const BATCH_PATH = '/batch/gmail/v1';
/** Google refuses a batch of more calls than this. */
export const BATCH_MAX_CALLS = 100;

export interface HttpMessage {
  /** `GET /gmail/v1/… HTTP/1.1` or `HTTP/1.1 200 OK`. */
  startLine: string;
  /** Header names lower-cased; the first value of a repeated name. */
  headers: Map<string, string>;
  body: string;
}

export interface BatchPart {
  /** Content-ID without its angle brackets; undefined when the part has none. */
  contentId: string | undefined;
  /** Lower-cased Content-Type of the part itself (application/http when well formed). */
  contentType: string;
  http: HttpMessage;
}

/** The boundary a batch body is cut on, or undefined when the Content-Type is not multipart. */
export function batchBoundary(contentType: string | undefined): string | undefined {
  const ct = contentTypeOf([{ name: 'Content-Type', value: contentType ?? '' }]);
  const boundary = ct.params.get('boundary');
  return ct.value.startsWith('multipart/') && boundary !== undefined && boundary !== ''
    ? boundary
    : undefined;
}

/** One HTTP message: start line, header lines, an empty line, the body. */
export function parseHttpMessage(text: string): HttpMessage {
  const m = /\r?\n\r?\n/.exec(text);
  const head = m === null ? text : text.slice(0, m.index);
  const body = m === null ? '' : text.slice(m.index + m[0].length);
  const [startLine = '', ...lines] = head.split(/\r?\n/);
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return { startLine: startLine.trim(), headers, body };
}

/**
 * The parts of a batch body, in order (RFC 2046 §5.1, by the same splitter that reads mail).
 * undefined when `contentType` names no multipart boundary.
 */
export function decodeBatch(
  body: string | Uint8Array,
  contentType: string | undefined,
): BatchPart[] | undefined {
  const boundary = batchBoundary(contentType);
  if (boundary === undefined) return undefined;
  const head = Buffer.from(
    `Content-Type: multipart/mixed; boundary="${boundary.replace(/["\\]/g, '\\$&')}"\r\n\r\n`,
  );
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
  const { root } = parseRawMessage(Buffer.concat([head, bytes]));
  return root.children.map((node) => {
    const rawId = node.headers.find((h) => h.name.toLowerCase() === 'content-id')?.value;
    const contentId = rawId === undefined ? undefined : rawId.trim().replace(/^<(.*)>$/s, '$1');
    const text = Buffer.from(node.body ?? new Uint8Array()).toString('utf8');
    return { contentId, contentType: node.mimeType, http: parseHttpMessage(text) };
  });
}

/** A batch body from whole HTTP messages (each already `start line CRLF headers CRLF CRLF body`). */
export function encodeBatch(
  boundary: string,
  parts: ReadonlyArray<{ contentId?: string; http: string }>,
): string {
  const out: string[] = [];
  for (const p of parts) {
    const id = p.contentId === undefined ? '' : `Content-ID: <${p.contentId}>\r\n`;
    out.push(`--${boundary}\r\nContent-Type: application/http\r\n${id}\r\n${p.http}\r\n`);
  }
  out.push(`--${boundary}--\r\n`);
  return out.join('');
}
