/**
 * The one seam through which Gmail and OAuth requests leave the process. The client always
 * addresses Google's real URLs (so the egress checkpoint judges what production would send);
 * a transport decides where the bytes actually go.
 */
export type Transport = (url: string, init: RequestInit) => Promise<Response>;

/** Production: Node's global fetch (undici). */
export const fetchTransport: Transport = (url, init) => fetch(url, init);

/** The only origins a loopback transport will rewrite; anything else is refused, not forwarded. */
const GOOGLE_ORIGINS: readonly string[] = ['https://gmail.googleapis.com', 'https://oauth2.googleapis.com'];

/**
 * WHATWG URL canonicalises IPv4 spellings (`0x7f.1`, `2130706433`) to dotted decimal before we
 * look at `hostname`, so one check on the canonical form covers them all.
 */
function isLoopbackHost(hostname: string): boolean {
  if (hostname === 'localhost' || hostname === '[::1]') return true;
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(hostname);
  return m !== null && m[1] === '127';
}

/**
 * Routes Google-addressed requests to a local Gmail simulator (the sandbox serves Google's own
 * paths: `/gmail/v1/users/…` and `/token`). The base URL must be loopback so that a
 * misconfiguration can never send mailbox traffic (or a bearer token) to another machine.
 */
export function loopbackTransport(baseUrl: string, inner: Transport = fetchTransport): Transport {
  let base: URL;
  try {
    base = new URL(baseUrl);
  } catch {
    throw new Error(`loopbackTransport: "${baseUrl}" is not a URL`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new Error(`loopbackTransport: ${base.protocol} is not http(s)`);
  }
  if (base.username !== '' || base.password !== '') {
    throw new Error('loopbackTransport: the base URL must not carry credentials');
  }
  if (!isLoopbackHost(base.hostname)) {
    throw new Error(
      `loopbackTransport: host "${base.hostname}" is not loopback (127.0.0.0/8, ::1, localhost); refusing to route mail there`,
    );
  }
  const prefix = `${base.origin}${base.pathname.replace(/\/+$/, '')}`;
  return (url, init) => {
    const origin = GOOGLE_ORIGINS.find((o) => url.startsWith(`${o}/`));
    if (origin === undefined) {
      return Promise.reject(
        new Error(`loopbackTransport: refusing to route ${url}; only Google API origins`),
      );
    }
    return inner(`${prefix}${url.slice(origin.length)}`, init);
  };
}

/** Google itself, or a sandbox on loopback when one is named (tests, demo, benchmarks). */
export function googleTransport(sandboxUrl: string | undefined): Transport {
  return sandboxUrl ? loopbackTransport(sandboxUrl) : fetchTransport;
}
