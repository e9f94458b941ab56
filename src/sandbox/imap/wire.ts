/**
 * Just enough of the IMAP wire format (RFC 3501 §4, §7) for the bridge profile's front end to read
 * whole commands and responses, literals included, and to rewrite or answer them.
 */

/** One command or response: its lines (without CRLF, latin1) and the literal after line i. */
export interface Unit {
  lines: string[];
  literals: Buffer[];
}

const LITERAL_AT_END = /\{(\d+)(\+?)\}$/;

/**
 * Splits a byte stream into units. A line ending in `{n}` is followed by n bytes and more of the
 * same unit; `onSyncLiteral` runs when the peer waits for a continuation before sending them.
 */
export class UnitReader {
  private buf: Buffer = Buffer.alloc(0);
  private lines: string[] = [];
  private literals: Buffer[] = [];
  private need = -1;

  constructor(private readonly onSyncLiteral?: () => void) {}

  push(chunk: Buffer): Unit[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const out: Unit[] = [];
    for (;;) {
      if (this.need >= 0) {
        if (this.buf.length < this.need) break;
        this.literals.push(Buffer.from(this.buf.subarray(0, this.need)));
        this.buf = this.buf.subarray(this.need);
        this.need = -1;
        continue;
      }
      const nl = this.buf.indexOf('\r\n');
      if (nl < 0) break;
      const line = this.buf.subarray(0, nl).toString('latin1');
      this.buf = this.buf.subarray(nl + 2);
      this.lines.push(line);
      const m = LITERAL_AT_END.exec(line);
      if (m) {
        this.need = Number(m[1]);
        if (m[2] !== '+') this.onSyncLiteral?.();
        continue;
      }
      out.push({ lines: this.lines, literals: this.literals });
      this.lines = [];
      this.literals = [];
    }
    return out;
  }
}

/**
 * The unit's bytes. `nonSync` turns every `{n}` into `{n+}` (LITERAL+, RFC 7888): the front end
 * has already collected a command's literals, so it sends them without waiting for Dovecot's `+`.
 */
export function serialize(unit: Unit, nonSync = false): Buffer {
  const parts: Buffer[] = [];
  unit.lines.forEach((line, i) => {
    const literal = unit.literals[i];
    const text = literal && nonSync ? line.replace(LITERAL_AT_END, `{${literal.length}+}`) : line;
    parts.push(Buffer.from(`${text}\r\n`, 'latin1'));
    if (literal) parts.push(literal);
  });
  return Buffer.concat(parts);
}

/** A command's text for logs and fault matching: literals shown inline (latin1). */
export function unitText(unit: Unit): string {
  return serialize(unit).toString('latin1');
}

export type Token =
  { t: 'atom'; v: string } | { t: 'str'; v: Buffer; literal: boolean } | { t: '(' } | { t: ')' };

/** Tokens of a command (tag and verb included): atoms, strings (quoted or literal), parens. */
export function tokenize(unit: Unit): Token[] {
  const out: Token[] = [];
  unit.lines.forEach((line, i) => {
    const literal = unit.literals[i];
    const body = literal ? line.replace(LITERAL_AT_END, '') : line;
    let p = 0;
    while (p < body.length) {
      const c = body[p];
      if (c === ' ') {
        p++;
      } else if (c === '(' || c === ')') {
        out.push({ t: c });
        p++;
      } else if (c === '"') {
        let v = '';
        p++;
        while (p < body.length && body[p] !== '"') {
          if (body[p] === '\\') p++;
          v += body[p] ?? '';
          p++;
        }
        p++;
        out.push({ t: 'str', v: Buffer.from(v, 'latin1'), literal: false });
      } else {
        // An atom may hold brackets (BODY[HEADER]) but ends at a space or a paren.
        let end = p;
        let depth = 0;
        while (end < body.length) {
          const ch = body[end];
          if (ch === '[') depth++;
          else if (ch === ']') depth--;
          else if (depth <= 0 && (ch === ' ' || ch === '(' || ch === ')')) break;
          end++;
        }
        out.push({ t: 'atom', v: body.slice(p, end) });
        p = end;
      }
    }
    if (literal) out.push({ t: 'str', v: literal, literal: true });
  });
  return out;
}

/** A token's value as a string (mailbox names, search terms): atoms as-is, strings as UTF-8. */
export function tokenValue(tok: Token | undefined): string | undefined {
  if (!tok) return undefined;
  if (tok.t === 'atom') return tok.v;
  if (tok.t === 'str') return tok.v.toString('utf8');
  return undefined;
}

/** Tokens back into a command unit; strings that are not plain printable ASCII go as literals. */
export function untokenize(tokens: Token[]): Unit {
  const lines: string[] = [];
  const literals: Buffer[] = [];
  let line = '';
  let prev: Token | undefined;
  for (const tok of tokens) {
    const glue = prev === undefined || prev.t === '(' || tok.t === ')' ? '' : ' ';
    if (tok.t === 'atom') line += glue + tok.v;
    else if (tok.t === '(' || tok.t === ')') line += glue + tok.t;
    else if (/^[\x20-\x7e]*$/.test(tok.v.toString('latin1')) && !tok.literal) {
      line += `${glue}"${tok.v.toString('latin1').replace(/[\\"]/g, (m) => `\\${m}`)}"`;
    } else {
      lines.push(`${line}${glue}{${tok.v.length}}`);
      literals.push(tok.v);
      line = '';
      // After a literal's bytes the command goes on with a space, as after any other token.
      prev = tok;
      continue;
    }
    prev = tok;
  }
  lines.push(line);
  return { lines, literals };
}
