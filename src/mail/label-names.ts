import type { Label } from './types.js';

/**
 * A label's name as a result shows it. A label, folder or keyword name the mail server did not
 * make itself is mail-made (a Sieve `fileinto :create "${subject}"`, another client, a shared
 * mailbox, a keyword another program set): it goes through `wrap` (the result's fence) like any
 * mail string. Only system labels (INBOX, SENT, CATEGORY_*, …) are shown as they are; an id the
 * label list does not know counts as mail-made.
 */
export function shownLabel(label: Label | undefined, id: string, wrap: (name: string) => string): string {
  return label?.type === 'system' ? label.name : wrap(label?.name ?? id);
}
