import { describe, expect, it } from 'vitest';
import { cleanLine } from '../../src/mail/invisible.js';
import { shownUrl } from '../../src/mail/shown-url.js';

describe('shownUrl: a URL as the request it would make', () => {
  it('shows the WHATWG serialisation: punycode host, hidden characters percent-encoded', () => {
    const u = shownUrl('https://news.n\u043erthwind-bank.com/u?id=1\u200B&x=\u202Eevil#\u2066f');
    expect(u).toEqual({
      url: 'https://news.xn--nrthwind-bank-i7k.com/u?id=1%E2%80%8B&x=%E2%80%AEevil#%E2%81%A6f',
      host: 'news.xn--nrthwind-bank-i7k.com',
      hostUnicode: 'news.n\u043erthwind-bank.com',
      lookalike: true,
      resembles: 'news.northwind-bank.com',
    });
    // The result cleaner has nothing to remove from what is shown, so shown = requested.
    expect(cleanLine(u.url)).toBe(u.url);
    expect(new URL(u.url).href).toBe(u.url);
  });

  it('keeps a plain URL as it is and adds nothing', () => {
    expect(shownUrl('https://lists.example.org/unsubscribe?u=42')).toEqual({
      url: 'https://lists.example.org/unsubscribe?u=42',
      host: 'lists.example.org',
    });
  });

  it('drops what the parser drops (tabs, newlines, a zero-width space in the host) from both', () => {
    const u = shownUrl('https://pay\u200Bpal.example/\tun\nsub');
    expect(u.url).toBe('https://paypal.example/unsub');
    expect(u.host).toBe('paypal.example');
  });

  it('flags an ASCII imitation of the sender and a genuine IDN without calling it a lookalike', () => {
    expect(shownUrl('http://rnarlowefreight.com/u', ['marlowefreight.com'])).toMatchObject({
      lookalike: true,
      resembles: 'marlowefreight.com',
    });
    const idn = shownUrl('https://münchen.example/abmelden');
    expect(idn).toEqual({
      url: 'https://xn--mnchen-3ya.example/abmelden',
      host: 'xn--mnchen-3ya.example',
      hostUnicode: 'münchen.example',
    });
  });

  it('an A-label that does not decode is no request at all', () => {
    expect(shownUrl('https://xn--abc.example/x')).toEqual({
      url: 'https://xn--abc.example/x',
      parses: false,
    });
  });

  it('shows a URL that does not parse with every hidden character visible, and says so', () => {
    expect(shownUrl('https://exa mple.com/\u200B\uD800')).toEqual({
      url: 'https://exa%20mple.com/%E2%80%8B%EF%BF%BD',
      parses: false,
    });
  });
});
