/*
 * The review page's one way of making HTML: a tagged template whose every interpolation is
 * escaped as text unless it is itself a fragment made by the template. No string from mail, the
 * log or policy.json can become markup, whichever column or attribute it lands in.
 */

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Text for an HTML text node or a double-quoted attribute value. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"'`]/g, (c) => ENTITIES[c] as string);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(v: Part): string {
  if (v === null || v === undefined || v === false || v === true) return '';
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new Html(out);
}
