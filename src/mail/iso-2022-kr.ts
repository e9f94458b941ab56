/**
 * ISO-2022-KR (RFC 1557), which iconv-lite has no codec for. The header `ESC $ ) C` designates
 * KS X 1001 to G1 (once, at the start of a line); SHIFT OUT (0x0E) switches to it and SHIFT IN
 * (0x0F) back to ASCII; in G1 each pair of bytes 0x21–0x7E is a KS X 1001 character, which is
 * the same pair with the high bit set in EUC-KR. A line end returns to ASCII (RFC 1557 §2).
 */
import iconv from 'iconv-lite';

const ESC = 0x1b;
const SO = 0x0e;
const SI = 0x0f;
const DESIGNATE = [0x24, 0x29, 0x43]; // $ ) C

export function decodeIso2022Kr(bytes: Uint8Array): string {
  let out = '';
  let ascii: number[] = [];
  let pairs: number[] = [];
  let shifted = false;
  const flushAscii = (): void => {
    if (ascii.length > 0) out += Buffer.from(ascii).toString('latin1');
    ascii = [];
  };
  const flushPairs = (): void => {
    if (pairs.length > 0) out += iconv.decode(Buffer.from(pairs), 'euc-kr');
    pairs = [];
  };
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if (b === ESC && DESIGNATE.every((d, k) => bytes[i + 1 + k] === d)) {
      i += DESIGNATE.length;
      continue;
    }
    if (b === SO) {
      flushAscii();
      shifted = true;
      continue;
    }
    if (b === SI || b === 0x0a || b === 0x0d) {
      flushPairs();
      shifted = false;
      if (b === SI) continue;
    }
    if (shifted && b >= 0x21 && b <= 0x7e) {
      pairs.push(b | 0x80);
      continue;
    }
    if (shifted) {
      // A space or a byte KS X 1001 cannot hold: the pair so far ends, the byte stands as it is.
      flushPairs();
      ascii.push(b < 0x80 ? b : 0x3f);
      flushAscii();
      continue;
    }
    // 8-bit bytes have no meaning in this 7-bit charset.
    if (b >= 0x80) {
      flushAscii();
      out += '\uFFFD';
      continue;
    }
    ascii.push(b);
  }
  flushPairs();
  flushAscii();
  return out;
}
