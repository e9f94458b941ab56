/*
 * The Host and Origin names a loopback server answers to (DNS rebinding: any other name is
 * refused). Kept apart from http.ts so the review page (src/review/) checks requests the same way
 * without loading the MCP SDK, and binds its port the same way.
 */

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Host and Origin names a loopback server answers to. */
export const LOOPBACK_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

export function bracketed(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** Binds `server` to host:port (0: any free port); the port it got, or the bind's own error. */
export function listenOn(server: Server, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** RFC 9110 §7.2 Host: uri-host [":" port]; a name, an IPv4 literal or a bracketed IPv6 literal. */
const HOST_HEADER = /^(?<name>\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::(?<port>\d{1,5}))?$/i;

/**
 * The Host header's name, lower-cased, or undefined when it is not a Host at all. Userinfo
 * (`evil.example@localhost`), paths and other URL parts are not part of a Host: a URL parser
 * would read `localhost` out of it, and building a request URL from it fails later.
 */
export function hostName(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const m = HOST_HEADER.exec(header.trim());
  return m?.groups?.['name']?.toLowerCase();
}

/**
 * The Origin rule `mailwarden http` applies through the SDK's originValidation: no Origin
 * (a client that is not a browser) passes; one that does not parse, or whose host name is not
 * allowed, does not.
 */
export function originAllowed(origin: string | string[] | undefined, names: ReadonlySet<string>): boolean {
  if (origin === undefined || origin === '') return true;
  if (typeof origin !== 'string') return false;
  try {
    const { hostname } = new URL(origin);
    return hostname !== '' && names.has(hostname);
  } catch {
    return false;
  }
}
