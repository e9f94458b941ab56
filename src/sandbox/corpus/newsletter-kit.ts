/**
 * Shared pieces for bulk mail: the RFC 2369 / RFC 8058 list headers and an HTML newsletter
 * template with the hidden preheader bulk senders put first in the body.
 */
import type { CorpusBuilder } from './builder.js';
import type { UnsubscribeFact } from './facts.js';
import { alternative, headerText, html, plain, type Entity, type Header } from './mime.js';

export interface Unsub {
  kind: UnsubscribeFact['kind'];
  https?: string;
  mailto?: string;
  bodyLink?: string;
}

/** List-Id plus whichever List-Unsubscribe form the sender chose. */
export function listHeaders(listId: string, u: Unsub): Header[] {
  // RFC 2919: the phrase before <list-label> is ordinary header text, encoded when not ASCII.
  const m = /^(.*?)\s*(<[^<>]+>)$/.exec(listId);
  const out: Header[] = [['List-Id', m?.[1] ? `${headerText(m[1])} ${m[2] ?? ''}` : listId]];
  const uris: string[] = [];
  if (u.kind !== 'body-link-only') {
    if (u.https) uris.push(`<${u.https}>`);
    if (u.mailto) uris.push(`<${u.mailto}>`);
  }
  if (uris.length) out.push(['List-Unsubscribe', uris.join(', ')]);
  if (u.kind === 'one-click') out.push(['List-Unsubscribe-Post', 'List-Unsubscribe=One-Click']);
  out.push(['Precedence', 'bulk']);
  return out;
}

/** Records the thread under its unsubscribe kind, so every list header in the corpus is accounted for. */
export function registerList(b: CorpusBuilder, key: string, listId: string, u: Unsub): void {
  const list = {
    'one-click': 'oneClickNewsletters',
    'mailto-only': 'mailtoOnlyNewsletters',
    'https-no-post': 'httpsNoPostNewsletters',
    'body-link-only': 'bodyLinkOnlyNewsletters',
  } as const;
  b.add(list[u.kind], key);
  const fact: UnsubscribeFact = { kind: u.kind, listId };
  if (u.https && u.kind !== 'body-link-only') fact.https = u.https;
  if (u.mailto && u.kind !== 'body-link-only') fact.mailto = u.mailto;
  if (u.bodyLink) fact.bodyLink = u.bodyLink;
  b.unsubscribe[key] = fact;
}

export interface Section {
  title: string;
  text: string;
  link: string;
}

export interface LetterContent {
  brand: string;
  accent: string;
  preheader: string;
  intro: string;
  sections: Section[];
  /** Footer unsubscribe link (every bulk sender has one, header or not). */
  footerLink: string;
  postal: string;
  /** Also send a text/plain alternative (most ESPs do; some do not). */
  textPart?: boolean;
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The spacer bulk senders pad a preheader with, so the inbox preview stops where they want. */
const SPACER = '&#847;&zwnj;&nbsp;'.repeat(12);

export function newsletterBody(c: LetterContent): Entity {
  const sections = c.sections
    .map(
      (s) =>
        `<tr><td style="padding:16px 32px">\n<h2 style="font:bold 20px Georgia,serif;color:${c.accent};margin:0 0 8px">${esc(s.title)}</h2>\n` +
        `<p style="font:15px/1.5 Arial,sans-serif;color:#333;margin:0 0 8px">${esc(s.text)}</p>\n` +
        `<a href="${s.link}" style="color:${c.accent}">Read more &rarr;</a>\n</td></tr>`,
    )
    .join('\n');
  const markup = `<!DOCTYPE html>
<html lang="en"><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(c.brand)}</title></head>
<body style="margin:0;padding:0;background:#f3f1ec">
<div style="display:none;font-size:1px;color:#f3f1ec;line-height:1px;max-height:0;max-width:0;opacity:0;overflow:hidden;mso-hide:all">${esc(c.preheader)}${SPACER}</div>
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0"><tr><td align="center">
<table role="presentation" width="600" cellpadding="0" cellspacing="0" border="0" style="background:#ffffff">
<tr><td style="padding:24px 32px;background:${c.accent};color:#fff;font:bold 26px Georgia,serif">${esc(c.brand)}</td></tr>
<tr><td style="padding:16px 32px;font:15px/1.5 Arial,sans-serif;color:#333">${esc(c.intro)}</td></tr>
${sections}
<tr><td style="padding:24px 32px;font:12px/1.4 Arial,sans-serif;color:#888">
You are receiving this email because you signed up at ${esc(c.brand)}.<br>
<a href="${c.footerLink}" style="color:#888">Unsubscribe</a> &middot; <a href="${c.footerLink.replace(/unsub\w*/, 'preferences')}" style="color:#888">Email preferences</a><br>
${esc(c.postal)}
</td></tr>
</table></td></tr></table>
</body></html>`;
  const htmlPart = html(markup, { cte: 'quoted-printable' });
  if (!c.textPart) return htmlPart;
  const text = [
    c.brand.toUpperCase(),
    '',
    c.intro,
    '',
    ...c.sections.flatMap((s) => [s.title, s.text, s.link, '']),
    `Unsubscribe: ${c.footerLink}`,
    c.postal,
  ].join('\n');
  return alternative(plain(text), htmlPart);
}
