/**
 * `bodies: new` — cut the quoted history a reply drags along, keep what the sender wrote.
 *
 * Only TRAILING history is removed: everything from an attribution line ("On … wrote:"), an
 * Outlook header block or a final run of "> " lines to the end. An inline reply (quotes
 * interleaved with answers) is left whole, and so is a forward: there the quoted part is the
 * point of the message.
 */

export interface StrippedText {
  text: string;
  removed: boolean;
}

function isQuoted(line: string): boolean {
  return /^[ \t]*>/.test(line);
}

function isBlank(line: string): boolean {
  return line.trim() === '';
}

/**
 * Attribution lines as mail clients write them (Gmail, Apple Mail, Thunderbird and Outlook's
 * plain-text reply), in English and the common localised forms.
 */
const ATTRIBUTION: readonly RegExp[] = [
  /^On\b.{4,}\bwrote\s*:$/i,
  /^Am\b.{4,}\bschrieb\b.*:$/i,
  /^Le\b.{4,}\ba\s+écrit\s*:$/i,
  /^El\b.{4,}\bescribió\s*:$/i,
  /^Op\b.{4,}\bschreef\b.*:$/i,
  /^Il\b.{4,}\bha\s+scritto\s*:$/i,
  /^Em\b.{4,}\bescreveu\s*:$/i,
  /^Den\b.{4,}\bskrev\b.*:$/i,
];

const DANGLING_ATTRIBUTION =
  /\b(?:wrote|schrieb|a\s+écrit|escribió|schreef|ha\s+scritto|escreveu|skrev)\s*:$/i;

const ATTRIBUTION_OPENER = /^(?:On|Am|Le|El|Op|Il|Em|Den)\s/i;

/** Lines an attribution starting at `i` spans (clients wrap long ones), or 0 when none does. */
function attributionAt(lines: readonly string[], i: number): number {
  const first = lines[i] ?? '';
  if (!ATTRIBUTION_OPENER.test(first.trim())) return 0;
  let joined = '';
  for (let n = 1; n <= 3 && i + n - 1 < lines.length; n++) {
    const line = lines[i + n - 1] as string;
    if (isQuoted(line) || (n > 1 && isBlank(line))) return 0;
    joined = `${joined} ${line.trim()}`.trim().replace(/\u00a0/g, ' ');
    // Clients always put a date or time in it; a sentence that merely starts with "On" and
    // ends in "wrote:" does not have one, and is not followed by a quote.
    if (ATTRIBUTION.some((re) => re.test(joined)))
      return /\d/.test(joined) && quoteFollows(lines, i + n) ? n : 0;
  }
  return 0;
}

function quoteFollows(lines: readonly string[], from: number): boolean {
  let j = from;
  while (j < lines.length && isBlank(lines[j] as string)) j++;
  return j < lines.length && isQuoted(lines[j] as string);
}

const ORIGINAL_MESSAGE =
  /^-{2,}\s*(?:Original Message|Ursprüngliche Nachricht|Message d'origine|Mensaje original|Messaggio originale|Oorspronkelijk bericht|Mensagem original)\s*-{2,}$/i;

const FORWARD_MARKER =
  /^(?:-{3,}\s*Forwarded message\s*-{3,}|Begin forwarded message:|-{3,}\s*(?:Weitergeleitete Nachricht|Message transféré|Mensaje reenviado)\s*-{3,})/i;

/** Outlook header field names (English, German, French, Spanish), possibly *bold* in plain text. */
const FROM_FIELD = /^\*?(?:From|Von|De)\s*:\*?\s/i;
const SENT_FIELD = /^\*?(?:Sent|Date|Gesendet|Datum|Envoyé|Enviado|Fecha)\s*:\*?\s/i;
const SUBJECT_FIELD = /^\*?(?:Subject|Betreff|Objet|Asunto)\s*:\*?/i;

/**
 * An Outlook reply header block at `i`: "From:" followed within a few lines by "Sent:"/"Date:"
 * and "Subject:". Returns where the cut starts (the "____" separator line above it, if any).
 */
function outlookHeaderAt(lines: readonly string[], i: number): number | undefined {
  if (!FROM_FIELD.test((lines[i] ?? '').trim())) return undefined;
  let sent = false;
  let subject = false;
  for (let j = i + 1; j < Math.min(lines.length, i + 8); j++) {
    const l = (lines[j] ?? '').trim();
    if (SENT_FIELD.test(l)) sent = true;
    if (SUBJECT_FIELD.test(l)) subject = true;
  }
  if (!sent || !subject) return undefined;
  let start = i;
  let k = i - 1;
  while (k >= 0 && isBlank(lines[k] ?? '')) k--;
  if (k >= 0 && /^_{10,}$/.test((lines[k] ?? '').trim())) start = k;
  return start;
}

/** After an attribution, new text below a quoted line means the writer answered inline. */
function onlyHistoryAfter(lines: readonly string[], from: number): boolean {
  let seenQuote = false;
  for (let j = from; j < lines.length; j++) {
    const l = lines[j] as string;
    if (isQuoted(l)) seenQuote = true;
    else if (!isBlank(l) && seenQuote) return false;
  }
  return true;
}

function tidy(lines: string[]): string {
  const out = [...lines];
  const trimTail = (): void => {
    while (out.length > 0 && isBlank(out[out.length - 1] as string)) out.pop();
  };
  trimTail();
  // A signature separator ("-- ", RFC 3676 §4.3) whose signature went with the history.
  if (out.length > 0 && /^--\s*$/.test(out[out.length - 1] as string)) {
    out.pop();
    trimTail();
  }
  return out.map((l) => l.replace(/[ \t]+$/, '')).join('\n');
}

/** Index where trailing history starts, or undefined. */
function historyStart(lines: readonly string[]): number | undefined {
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (isQuoted(line)) continue;
    const t = line.trim();
    // A forward is kept whole, along with anything it carries (its own quoted replies).
    if (FORWARD_MARKER.test(t)) return undefined;
    const span = attributionAt(lines, i);
    if (span > 0) {
      if (onlyHistoryAfter(lines, i + span)) return i;
      continue;
    }
    if (ORIGINAL_MESSAGE.test(t)) return i;
    const outlook = outlookHeaderAt(lines, i);
    if (outlook !== undefined) return outlook;
  }
  // No marker: a final block of quoted lines (blank lines between them included).
  let end = lines.length - 1;
  while (end >= 0 && isBlank(lines[end] as string)) end--;
  if (end < 0 || !isQuoted(lines[end] as string)) return undefined;
  let start = end;
  while (start > 0 && (isQuoted(lines[start - 1] as string) || isBlank(lines[start - 1] as string))) start--;
  // An attribution without a recognised opener ("Jane Doe <jane@example.com> wrote:") goes too.
  if (start > 0 && DANGLING_ATTRIBUTION.test((lines[start - 1] as string).trim())) start--;
  return start;
}

/**
 * Removes trailing quoted history from a plain-text body. `removed` says whether anything was
 * cut. When the history is all there is (nothing new above it) the text is kept: an empty
 * "new" body would hide the message entirely.
 */
export function stripQuotedHistory(text: string): StrippedText {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const start = historyStart(lines);
  if (start !== undefined) {
    const kept = tidy(lines.slice(0, start));
    if (kept.trim() !== '') return { text: kept, removed: true };
  }
  return { text: tidy(lines), removed: false };
}
