/**
 * ISO-2022-JP (RFC 1468; CP50220's NEC/IBM extensions; JIS X 0212 from RFC 2237) decoded with a
 * state machine modelled on the WHATWG Encoding Standard's decoder. iconv-lite has no codec for
 * it. Every byte that is not valid in the current state becomes one U+FFFD and decoding goes on
 * with the next byte, so a label on bytes that are not JIS (8-bit Shift_JIS, UTF-8, Latin-1) can
 * neither produce lone surrogates nor swallow the characters next to the bad ones.
 */
import iconv from 'iconv-lite';

type Mode = 'ascii' | 'roman' | 'katakana' | 'jis0208' | 'jis0212';

const ESC = 0x1b;
const REPLACEMENT = '\ufffd';

/** The escape sequence at `i` (RFC 1468 §2, RFC 2237): the mode it selects and its length. */
function escapeAt(bytes: Uint8Array, i: number): { mode: Mode; length: number } | undefined {
  const [b1, b2, b3] = [bytes[i + 1], bytes[i + 2], bytes[i + 3]];
  if (b1 === 0x28 && b2 === 0x42) return { mode: 'ascii', length: 3 };
  if (b1 === 0x28 && b2 === 0x4a) return { mode: 'roman', length: 3 };
  if (b1 === 0x28 && b2 === 0x49) return { mode: 'katakana', length: 3 };
  if (b1 === 0x24 && (b2 === 0x40 || b2 === 0x42)) return { mode: 'jis0208', length: 3 };
  if (b1 === 0x24 && b2 === 0x28 && (b3 === 0x40 || b3 === 0x42)) return { mode: 'jis0208', length: 4 };
  if (b1 === 0x24 && b2 === 0x28 && b3 === 0x44) return { mode: 'jis0212', length: 4 };
  return undefined;
}

const isJisByte = (b: number | undefined): b is number => b !== undefined && b >= 0x21 && b <= 0x7e;

/**
 * A JIS X 0208 row/cell pair as its Shift_JIS bytes, decoded as cp932 (Microsoft's Shift_JIS),
 * which holds the NEC row 13 (①, ㈱) and IBM extensions mailers send as ISO-2022-JP.
 */
function pushShiftJis(out: number[], j1: number, j2: number): void {
  out.push(((j1 + 1) >> 1) + (j1 <= 0x5e ? 0x70 : 0xb0));
  out.push(j2 + (j1 & 1 ? (j2 >= 0x60 ? 0x20 : 0x1f) : 0x7e));
}

export function decodeIso2022Jp(bytes: Uint8Array): string {
  let mode: Mode = 'ascii';
  let out = '';
  // Pairs of the current double-byte run, decoded together.
  let pairs: number[] = [];
  const flush = (): void => {
    if (pairs.length === 0) return;
    const codec = mode === 'jis0212' ? 'euc-jp' : 'cp932';
    const width = mode === 'jis0212' ? 3 : 2;
    const text = iconv.decode(Buffer.from(pairs), codec);
    if (!text.includes(REPLACEMENT)) out += text;
    else {
      // An unmapped pair is one error (WHATWG), however many replacements the codec gives it.
      for (let k = 0; k < pairs.length; k += width) {
        const one = iconv.decode(Buffer.from(pairs.slice(k, k + width)), codec);
        out += one.includes(REPLACEMENT) || [...one].length !== 1 ? REPLACEMENT : one;
      }
    }
    pairs = [];
  };
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if (b === ESC) {
      flush();
      const esc = escapeAt(bytes, i);
      if (esc === undefined) {
        out += REPLACEMENT; // the ESC alone; what follows is read again in the current mode
      } else {
        mode = esc.mode;
        i += esc.length - 1;
      }
      continue;
    }
    if (b >= 0x80 || b === 0x7f) {
      flush();
      out += REPLACEMENT;
      continue;
    }
    if (b <= 0x20) {
      flush();
      // Controls and spaces pass in every mode. A line end also returns to ASCII: RFC 1468 has
      // every line end in ASCII, and a mailer that forgot ESC ( B must not garble what follows.
      if ((b === 0x0a || b === 0x0d) && (mode === 'jis0208' || mode === 'jis0212')) mode = 'ascii';
      out += String.fromCharCode(b);
      continue;
    }
    switch (mode) {
      case 'ascii':
        out += String.fromCharCode(b);
        break;
      case 'roman':
        // JIS X 0201 Roman differs from ASCII in two places.
        out += b === 0x5c ? '\u00a5' : b === 0x7e ? '\u203e' : String.fromCharCode(b);
        break;
      case 'katakana':
        out += b <= 0x5f ? String.fromCharCode(0xff61 + b - 0x21) : REPLACEMENT;
        break;
      case 'jis0208':
      case 'jis0212': {
        const b2 = bytes[i + 1];
        if (!isJisByte(b2)) {
          // A lead without its trail: one error, and the next byte is read on its own.
          flush();
          out += REPLACEMENT;
          break;
        }
        if (mode === 'jis0208') pushShiftJis(pairs, b, b2);
        else pairs.push(0x8f, b | 0x80, b2 | 0x80);
        i++;
        break;
      }
    }
  }
  flush();
  return out;
}
