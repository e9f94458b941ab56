/**
 * The non-secret connection settings of an IMAP account, as accounts.json keeps them. The
 * password never appears here: it is stored encrypted beside the Gmail tokens
 * (src/store/imap-secret.ts).
 */
export type ImapSecurity = 'tls' | 'starttls' | 'insecure-loopback';

export interface ImapSettings {
  host: string;
  port: number;
  /** tls: implicit TLS (993); starttls: plain then STARTTLS (143, Proton Bridge 1143). */
  security: ImapSecurity;
  user: string;
  /** Lower-case hex SHA-256 of the server's leaf certificate (DER); set: trust exactly it. */
  pinSha256?: string;
  /**
   * The pinned certificate itself (PEM), so Node can build a chain for a self-signed one; set
   * together with pinSha256. Public data: the server hands it to anyone who connects.
   */
  pinCertPem?: string;
  /** The authserv-id whose Authentication-Results this account's mail may be judged by. */
  authservId?: string;
}

/** Default ports: RFC 8314 implicit TLS 993; RFC 3501 143 for STARTTLS. */
export function defaultPort(security: ImapSecurity): number {
  return security === 'tls' ? 993 : 143;
}
