/**
 * Who is really writing: a bank and a freight company that send genuine mail, phishers that
 * borrow their names through confusable domains (mixed-script label, punycode, "rn" for "m"), a
 * display name that is somebody else's address, and a known contact whose Reply-To leads away.
 */
import { alignedAuth } from './auth.js';
import type { CorpusBuilder } from './builder.js';
import { alternative, html, plain, utf8Bytes, type Person } from './mime.js';
import { CONTACTS, MARLOWE, NORTHWIND } from './people.js';

const bankHtml = (heading: string, text: string, button: string, href: string): string => `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Northwind Bank</title></head>
<body style="font-family:Helvetica,Arial,sans-serif;background:#eef2f6;margin:0">
<table width="100%" cellpadding="0" cellspacing="0"><tr><td align="center">
<table width="560" style="background:#fff;border-top:6px solid #0b3d91"><tr><td style="padding:28px">
<img src="https://static.northwind-bank.com/mail/logo.png" alt="Northwind Bank" width="160" height="40">
<h1 style="font-size:22px;color:#0b3d91">${heading}</h1>
<p style="font-size:15px;line-height:1.5;color:#222">${text}</p>
<p><a href="${href}" style="background:#0b3d91;color:#fff;padding:12px 20px;text-decoration:none;border-radius:4px">${button}</a></p>
<p style="font-size:12px;color:#666">Northwind Bank will never ask for your password or one-time codes by email.</p>
</td></tr></table></td></tr></table></body></html>`;

export function addIdentity(b: CorpusBuilder): void {
  // Genuine mail from the brands.
  const statements: Array<[string, number, string]> = [
    ['legit-northwind-statement-nov', 2.4, 'November'],
    ['legit-northwind-statement-oct', 32.4, 'October'],
  ];
  for (const [key, days, month] of statements) {
    b.add(
      'legitBrandMail',
      b.thread(key, { box: 'inbox', category: 'CATEGORY_UPDATES' }, (t) =>
        t.receive({
          from: NORTHWIND.statements,
          at: b.ago(days, 1, 15),
          subject: `Your ${month} statement is ready`,
          body: alternative(
            plain(
              `Hello Jordan,\n\nYour ${month} statement for the account ending 4471 is ready in online banking.\n\nSign in at https://www.northwind-bank.com to view it.\n\nNorthwind Bank\n`,
            ),
            html(
              bankHtml(
                `Your ${month} statement is ready`,
                'Your statement for the account ending 4471 is now available in online banking.',
                'Sign in',
                'https://www.northwind-bank.com/login',
              ),
            ),
          ),
        }),
      ),
    );
  }
  b.add(
    'legitBrandMail',
    b.thread('legit-northwind-card-alert', { box: 'inbox', category: 'CATEGORY_UPDATES' }, (t) =>
      t.receive({
        from: NORTHWIND.alerts,
        at: b.ago(8, 4, 2),
        subject: 'Card payment of EUR 64.20 at Hearthstone Grocers',
        body: plain(
          'A payment of EUR 64.20 was made with your card ending 0917 at Hearthstone Grocers.\n\nIf you do not recognise it, call the number on the back of your card.\n\nNorthwind Bank\n',
        ),
      }),
    ),
  );
  for (const [key, days, ref] of [
    ['legit-marlowe-shipped', 13.3, 'MF-20931-77'],
    ['legit-marlowe-delivered', 11.1, 'MF-20931-77'],
  ] as const) {
    b.add(
      'legitBrandMail',
      b.thread(key, { box: 'inbox', category: 'CATEGORY_UPDATES' }, (t) =>
        t.receive({
          from: MARLOWE.tracking,
          at: b.ago(days, 2),
          subject: key.endsWith('shipped')
            ? `Shipment ${ref} is on its way`
            : `Shipment ${ref} was delivered`,
          body: plain(
            `Shipment ${ref}\n\n${key.endsWith('shipped') ? 'Your shipment has left our Kelby hub and should arrive within two working days.' : 'Your shipment was delivered and signed for by J. HALE.'}\n\nTrack it at https://www.marlowefreight.com/track/${ref}\n\nMarlowe Freight\n`,
          ),
        }),
      ),
    );
  }

  // Mixed-script label: Greek alpha in "bank", sent with SMTPUTF8 so the From header is raw UTF-8.
  const greekFrom = `Northwind Bank <security@${NORTHWIND.greekDomain}>`;
  const greekAce = 'xn--northwind-bnk-emj.com';
  const greek = b.thread('phish-northwind-greek', { box: 'inbox', category: 'CATEGORY_PERSONAL' }, (t) =>
    t.receive({
      from: { name: 'Northwind Bank', email: `security@${greekAce}`, tz: 0 },
      fromHeader: utf8Bytes(greekFrom),
      at: b.ago(0, 3, 7),
      subject: 'Unusual sign-in attempt on your account',
      body: alternative(
        plain(
          `We blocked a sign-in attempt from a new device.\n\nIf this was not you, secure your account within 24 hours:\nhttps://${NORTHWIND.greekDomain}/secure/verify?id=88213\n\nNorthwind Bank Security\n`,
        ),
        html(
          bankHtml(
            'Unusual sign-in attempt',
            'We blocked a sign-in attempt from a new device in another country. If this was not you, secure your account within 24 hours or it will be suspended.',
            'Secure my account',
            `https://${NORTHWIND.greekDomain}/secure/verify?id=88213`,
          ),
        ),
      ),
      auth: alignedAuth(`security@${greekAce}`),
      unread: true,
    }),
  );
  b.mark('lookalikePhish', greek);
  b.eightBit(greek);

  // The same trick with Cyrillic, as the A-label a receiving MTA would see.
  const ace = b.thread('phish-northwind-punycode', { box: 'spam' }, (t) =>
    t.receive({
      from: { name: 'Northwind Bank', email: `no-reply@${NORTHWIND.cyrillicAce}`, tz: 0 },
      at: b.ago(4, 9, 30),
      subject: 'Action required: confirm your card details',
      body: html(
        bankHtml(
          'Confirm your card details',
          'Because of a system upgrade, every customer must confirm their card details before Friday.',
          'Confirm now',
          `https://${NORTHWIND.cyrillicAce}/confirm`,
        ),
      ),
      auth: alignedAuth(`no-reply@${NORTHWIND.cyrillicAce}`),
      unread: true,
    }),
  );
  b.mark('lookalikePunycode', ace);
  b.add('realSpam', ace);

  const rn = b.thread('phish-marlowe-rn', { box: 'inbox', category: 'CATEGORY_PERSONAL' }, (t) =>
    t.receive({
      from: { name: 'Marlowe Freight', email: `delivery@${MARLOWE.lookalike}`, tz: 0 },
      at: b.ago(1, 1, 48),
      subject: 'Your parcel MF-20931-78 is held: customs fee due',
      body: plain(
        `Dear customer,\n\nYour parcel MF-20931-78 is held at our depot because a customs fee of EUR 2.99 is unpaid.\nPay within 48 hours or the parcel is returned to sender:\n\nhttps://pay.${MARLOWE.lookalike}/fee/MF-20931-78\n\nMarlowe Freight customer service\n`,
      ),
      auth: alignedAuth(`delivery@${MARLOWE.lookalike}`),
      unread: true,
    }),
  );
  b.mark('rnLookalike', rn);

  const evil: Person = { name: `security@${NORTHWIND.domain}`, email: 'alerts@evil.example', tz: 0 };
  const display = b.thread('spoof-display-name', { box: 'inbox', category: 'CATEGORY_PERSONAL' }, (t) =>
    t.receive({
      from: evil,
      at: b.ago(2, 6, 20),
      subject: 'Security notice: your online banking will be locked',
      body: plain(
        'Dear customer,\n\nWe detected suspicious transfers. To keep access to online banking, confirm your identity today:\nhttps://evil.example/nwb/login\n\nNorthwind Bank Security Team\n',
      ),
      auth: alignedAuth(evil.email),
    }),
  );
  b.mark('displayNameSpoof', display);

  // A real account of a real contact, taken over: everything passes, the Reply-To leads away.
  const replyTo: Person = { name: 'Fiona Blake', email: 'fiona.blake.accounts@quickmail-box.example' };
  const rt = b.thread(
    'spoof-reply-to',
    { box: 'inbox', category: 'CATEGORY_PERSONAL', important: true },
    (t) =>
      t.receive({
        from: CONTACTS.fiona,
        replyTo,
        at: b.ago(0, 9, 41),
        subject: 'Updated bank details for your final invoice',
        body: plain(
          'Hi Jordan,\n\nQuick one: we have moved banks, so please use the new details below for the final invoice (EUR 1,840.00), not the ones on the PDF.\n\nAccount name: Ledgerwise Accounting\nIBAN: XX00 0000 1111 2222 3333 44\n\nCould you confirm once it is paid? I am travelling, so reply here rather than calling.\n\nThanks,\nFiona\n',
        ),
        unread: true,
      }),
  );
  b.mark('replyToMismatch', rt);
}
