import { ManualClock } from '../../src/mail/clock.js';
import { Sandbox } from '../../src/sandbox/index.js';
import type { SandboxOptions, SeedThread, SeedUser } from '../../src/sandbox/index.js';

export const ALICE = 'alice@example.com';
export const BOB = 'bob@example.com';
/** 2026-11-01T00:00:00Z: seed mail is dated from here on, one hour apart. */
export const BASE = Date.UTC(2026, 10, 1);
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

export interface MailSpec {
  from?: string;
  to?: string;
  subject: string;
  body?: string;
  messageId: string;
  inReplyTo?: string;
  extraHeaders?: string[];
}

/** A plain-text RFC 822 message with CRLF line ends. */
export function textMail(spec: MailSpec): string {
  return [
    `From: ${spec.from ?? 'Bob Builder <bob@example.com>'}`,
    `To: ${spec.to ?? ALICE}`,
    `Subject: ${spec.subject}`,
    `Date: Sun, 1 Nov 2026 10:00:00 +0000`,
    `Message-ID: <${spec.messageId}>`,
    ...(spec.inReplyTo ? [`In-Reply-To: <${spec.inReplyTo}>`, `References: <${spec.inReplyTo}>`] : []),
    ...(spec.extraHeaders ?? []),
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    spec.body ?? `Body of ${spec.subject}.`,
    '',
  ].join('\r\n');
}

/** Bytes no text decoding could leave intact: every byte value once. */
export const PDF_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);

export function multipartWithAttachment(): string {
  const b64 = Buffer.from(PDF_BYTES).toString('base64');
  return [
    'From: Billing <billing@shop.example>',
    `To: ${ALICE}`,
    'Subject: =?utf-8?q?Your_invoice_=E2=82=AC42?=',
    'Message-ID: <invoice-1@shop.example>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="XYZ"',
    '',
    '--XYZ',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    "Your invoice is attached. Total =E2=82=AC42 & it's due.",
    '--XYZ',
    'Content-Type: application/pdf; name="invoice.pdf"',
    'Content-Disposition: attachment; filename="invoice.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    ...(b64.match(/.{1,76}/g) ?? []),
    '--XYZ--',
    '',
  ].join('\r\n');
}

let n = 0;
function thread(
  key: string,
  labelIds: string[],
  spec: Omit<MailSpec, 'messageId'>,
  extra: Partial<SeedThread> = {},
): SeedThread {
  n += 1;
  return {
    key,
    messages: [
      {
        raw: textMail({ ...spec, messageId: `${key}@example.com` }),
        labelIds,
        internalDate: BASE + n * HOUR,
      },
    ],
    ...extra,
  };
}

/** A small mailbox that exercises every predicate the tests ask about. */
export function aliceSeed(): SeedUser {
  n = 0;
  const bulk = Array.from({ length: 7 }, (_, i) =>
    thread(`bulk-${i}`, ['INBOX', 'Label_3'], { subject: `Bulk ${i}`, from: 'list@bulk.example' }),
  );
  return {
    email: ALICE,
    userLabels: [
      { id: 'Label_1', name: 'Work' },
      { id: 'Label_2', name: 'Receipts' },
      { id: 'Label_3', name: 'Bulk' },
    ],
    threads: [
      ...bulk,
      thread('welcome', ['INBOX', 'UNREAD', 'CATEGORY_PERSONAL'], {
        subject: 'Welcome aboard',
        body: 'Glad you joined',
      }),
      {
        key: 'project',
        messages: [
          {
            raw: textMail({
              subject: 'Project plan',
              messageId: 'plan-1@example.com',
              body: 'Here is the plan.',
            }),
            labelIds: ['INBOX', 'Label_1'],
            internalDate: BASE + 20 * HOUR,
          },
          {
            raw: textMail({
              from: `Alice <${ALICE}>`,
              to: BOB,
              subject: 'Re: Project plan',
              messageId: 'plan-2@example.com',
              inReplyTo: 'plan-1@example.com',
              body: 'Looks good.',
            }),
            labelIds: ['SENT', 'Label_1'],
            internalDate: BASE + 21 * HOUR,
          },
          {
            raw: textMail({
              subject: 'Re: Project plan',
              messageId: 'plan-3@example.com',
              inReplyTo: 'plan-2@example.com',
              body: 'Then we start Monday.',
            }),
            labelIds: ['INBOX', 'UNREAD', 'Label_1'],
            internalDate: BASE + 22 * HOUR,
          },
        ],
      },
      {
        key: 'invoice',
        messages: [
          { raw: multipartWithAttachment(), labelIds: ['INBOX', 'Label_2'], internalDate: BASE + 23 * HOUR },
        ],
      },
      { ...thread('spam', ['SPAM', 'UNREAD'], { subject: 'You won a prize', from: 'winner@spam.example' }) },
      { ...thread('trashed', ['TRASH'], { subject: 'Old prize news', from: 'news@old.example' }) },
      thread(
        'stale',
        ['INBOX', 'CATEGORY_UPDATES'],
        { subject: 'Your weekly update', from: 'updates@svc.example' },
        {
          staleIndexUnread: true,
        },
      ),
    ],
  };
}

export function bobSeed(): SeedUser {
  return {
    email: BOB,
    userLabels: [],
    threads: [
      {
        key: 'hello',
        messages: [
          {
            raw: textMail({ subject: 'Hi Bob', to: BOB, messageId: 'hi@b' }),
            labelIds: ['INBOX'],
            internalDate: BASE,
          },
        ],
      },
    ],
  };
}

/** A started sandbox plus small helpers to call it the way a Gmail client would. */
export interface Harness {
  sandbox: Sandbox;
  clock: ManualClock;
  token(email?: string, scopes?: string[]): Promise<string>;
  /** JSON call to `/gmail/v1/users/me/<path>` with a bearer token. */
  gmail(
    path: string,
    init?: { method?: string; body?: unknown; token?: string },
  ): Promise<{
    status: number;
    headers: Headers;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- responses are asserted field by field
    json: any;
  }>;
}

export const START = Date.UTC(2026, 10, 30, 12);

export async function startHarness(options: Omit<SandboxOptions, 'users' | 'clock'> = {}): Promise<Harness> {
  const clock = new ManualClock(START);
  const sandbox = await Sandbox.start({ users: [aliceSeed(), bobSeed()], clock, ...options });
  // Cached like a real client caches: until the sandbox clock says the token has expired.
  const tokens = new Map<string, { token: string; expiresAt: number }>();
  const token = async (email = ALICE, scopes?: string[]): Promise<string> => {
    const key = `${email} ${scopes?.join(' ') ?? '*'}`;
    const cached = tokens.get(key);
    if (cached && clock.now() < cached.expiresAt) return cached.token;
    const refresh = scopes ? sandbox.issueRefreshToken(email, scopes) : sandbox.refreshTokenFor(email);
    const res = await fetch(`${sandbox.url}/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refresh,
        client_id: sandbox.oauthClient.clientId,
        client_secret: sandbox.oauthClient.clientSecret,
      }),
    });
    const body = (await res.json()) as { access_token: string; expires_in: number };
    tokens.set(key, { token: body.access_token, expiresAt: clock.now() + body.expires_in * 1000 });
    return body.access_token;
  };
  const gmail: Harness['gmail'] = async (path, init = {}) => {
    const res = await fetch(`${sandbox.url}/gmail/v1/users/me/${path}`, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: {
        Authorization: `Bearer ${init.token ?? (await token())}`,
        ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: text === '' ? undefined : JSON.parse(text) };
  };
  return { sandbox, clock, token, gmail };
}
