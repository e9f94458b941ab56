import { extractBody, listAttachments } from './body.js';
import { headerValue, headerValues } from './headers.js';
import type { MessageFacts } from './query/index.js';
import type { Header, MimeNode } from './types.js';

/** The label-independent part of a message's query facts. */
export type StaticFacts = Omit<MessageFacts, 'labelIds' | 'labelNames'>;

const joined = (headers: readonly Header[], name: string): string => headerValues(headers, name).join(', ');

/**
 * What the query evaluator reads of a message, derived one way for every provider (the sandbox's
 * Gmail simulation and the IMAP local check alike): decoded headers joined with ", ", the body
 * text a reader sees, and the names of the parts a reader would call attachments — so the same
 * message gets the same answer whichever way it came.
 */
export function staticFactsOf(
  headers: readonly Header[],
  root: MimeNode,
  internalDate: number,
  sizeEstimate: number,
): StaticFacts {
  return {
    from: joined(headers, 'From'),
    to: joined(headers, 'To'),
    cc: joined(headers, 'Cc'),
    bcc: joined(headers, 'Bcc'),
    deliveredTo: joined(headers, 'Delivered-To'),
    subject: headerValue(headers, 'Subject') ?? '',
    bodyText: extractBody(root).text,
    attachmentNames: listAttachments(root)
      .map((a) => a.filename)
      .filter((n) => n !== ''),
    internalDate,
    sizeEstimate,
    rfc822MessageId: headerValue(headers, 'Message-ID') ?? '',
    listId: headerValue(headers, 'List-Id') ?? '',
  };
}
