/**
 * Mail in the charsets that still arrive every day: ISO-8859-1 quoted-printable, windows-1252
 * with its 0x80–0x9F punctuation, Shift_JIS, ISO-2022-JP (RFC 1468), KOI8-R and GB18030, with
 * RFC 2047 subjects in B and Q form — and one legacy mailer writing raw 8-bit header bytes.
 */
import type { CorpusBuilder, ThreadOptions } from './builder.js';
import type { SingleKey } from './facts.js';
import { encodeText, encodeWords, formatMailbox, plain, type Person, type TransferEncoding } from './mime.js';
import { LABELS, OWNER } from './people.js';

interface CharsetMail {
  name: SingleKey;
  key: string;
  from: Person;
  charset: string;
  cte: TransferEncoding;
  mode: 'B' | 'Q';
  subject: string;
  body: string;
  daysAgo: number;
  opts: ThreadOptions;
  unread?: boolean;
}

export const CHARSET_MAILS: CharsetMail[] = [
  {
    name: 'charsetLatin1Qp',
    key: 'cs-latin1-annecy',
    from: { name: 'Élodie Marchand', email: 'reception@lac-dete-hotel.example', tz: 60 },
    charset: 'ISO-8859-1',
    cte: 'quoted-printable',
    mode: 'Q',
    subject: 'Réservation confirmée : séjour à Annecy',
    body:
      'Bonjour Jordan,\n\nNous avons le plaisir de confirmer votre réservation du 12 au 15 février à ' +
      "l'hôtel « Le Lac d'Été ».\nLe petit-déjeuner est servi de 7 h à 10 h ; le parking est compris.\n\n" +
      'À très bientôt,\nÉlodie Marchand\nRéception\n',
    daysAgo: 21.3,
    opts: { box: 'archive', category: 'CATEGORY_PERSONAL', labels: [LABELS.travel] },
  },
  {
    name: 'charsetWindows1252',
    key: 'cs-cp1252-angebot',
    from: { name: 'Karin Böhm', email: 'karin.boehm@uebersetzungen-boehm.example', tz: 60 },
    charset: 'windows-1252',
    cte: '8bit',
    mode: 'Q',
    subject: 'Angebot – Übersetzung 1.250 € „final“',
    body:
      'Guten Tag Herr Hale,\n\nanbei unser Angebot für die Übersetzung: Gesamtpreis 1.250 € (zzgl. MwSt.).\n' +
      'Ihr Kunde schrieb: „Bitte bis Freitag“ – das schaffen wir.\nUnd auf Englisch: “final means final” … ' +
      'wir nehmen danach keine Änderungen mehr an.\n\n• Lieferung: Freitag\n• Format: DOCX\n\n' +
      'Mit freundlichen Grüßen\nKarin Böhm\nÜbersetzungsbüro Böhm™\n',
    daysAgo: 3.6,
    opts: { box: 'inbox', category: 'CATEGORY_PERSONAL', labels: [LABELS.work] },
    unread: true,
  },
  {
    name: 'charsetShiftJis',
    key: 'cs-sjis-yuki',
    from: { name: '田辺 由紀', email: 'yuki.tanabe@example.org', tz: 540 },
    charset: 'Shift_JIS',
    cte: '8bit',
    mode: 'B',
    subject: '来週の金曜日について',
    body:
      'ジョーダンさん\n\nお元気ですか。来週の金曜日、東京で会えますか？\n' +
      '駅の近くの喫茶店で三時はどうでしょう。\n\n田辺 由紀\n',
    daysAgo: 1.8,
    opts: { box: 'inbox', category: 'CATEGORY_PERSONAL' },
  },
  {
    name: 'charsetIso2022Jp',
    key: 'cs-iso2022jp-ryokan',
    from: { name: '桜木旅館', email: 'info@sakuragi-ryokan.example', tz: 540 },
    charset: 'ISO-2022-JP',
    cte: '7bit',
    mode: 'B',
    subject: '【桜木旅館】ご予約の確認',
    body:
      'ヘイル様\n\nこの度は桜木旅館をご予約いただき、誠にありがとうございます。\n' +
      'ご予約内容は以下の通りです。\n\nチェックイン：十二月二十日\n泊数：二泊\n人数：二名\n\n' +
      '桜木旅館 フロント\n',
    daysAgo: 15.2,
    opts: { box: 'archive', category: 'CATEGORY_PERSONAL', labels: [LABELS.travel] },
  },
  {
    name: 'charsetKoi8r',
    key: 'cs-koi8r-report',
    from: { name: 'Дмитрий Орлов', email: 'd.orlov@example.net', tz: 180 },
    charset: 'KOI8-R',
    cte: '8bit',
    mode: 'B',
    subject: 'Отчёт за ноябрь',
    body:
      'Джордан, привет!\n\nПрисылаю отчёт за ноябрь. Цифры сверил с бухгалтерией.\n' +
      'Посмотри, пожалуйста, до пятницы.\n\nДмитрий\n',
    daysAgo: 4.4,
    opts: { box: 'inbox', category: 'CATEGORY_PERSONAL', labels: [LABELS.work] },
  },
  {
    name: 'charsetGb18030',
    key: 'cs-gb18030-meeting',
    from: { name: '陈静', email: 'chen.jing@example.com', tz: 480 },
    charset: 'GB18030',
    cte: 'base64',
    mode: 'B',
    subject: '关于下周合作会议的安排',
    body: 'Jordan 您好：\n\n下周三上午十点在上海办公室开会，讨论明年的合作计划。\n会议议程稍后发给您，请查收。\n\n陈静\n',
    daysAgo: 6.1,
    opts: { box: 'inbox', category: 'CATEGORY_PERSONAL', labels: [LABELS.work] },
  },
];

export function addCharsets(b: CorpusBuilder): void {
  const rng = b.rng('charsets');
  for (const m of CHARSET_MAILS) {
    const key = b.thread(m.key, m.opts, (t) =>
      t.receive({
        from: m.from,
        // Display names in the sender's charset too, as these mailers write them.
        fromHeader: `${encodeWords(m.from.name, m.charset, m.mode)} <${m.from.email}>`,
        at: b.ago(m.daysAgo, rng.int(0, 5), rng.int(0, 59)),
        subject: m.subject,
        subjectHeader: encodeWords(m.subject, m.charset, m.mode),
        body: plain(m.body, { charset: m.charset, cte: m.cte }),
        unread: m.unread ?? false,
      }),
    );
    b.mark(m.name, key);
    b.expectedText[key] = { subject: m.subject, body: m.body };
  }

  // An old mailer that puts ISO-8859-1 bytes straight into the Subject, no encoded-words.
  const uwe: Person = { name: 'Uwe Kraemer', email: 'uwe.kraemer@example.org', tz: 60 };
  const subject = 'Grüße aus Köln: Fotos vom Sommerfest';
  const body = 'Hallo Jordan,\n\nhier die Fotos vom Sommerfest. Schöne Grüße an alle!\n\nUwe\n';
  const raw = b.thread('cs-raw8bit-header', { box: 'inbox', category: 'CATEGORY_PERSONAL' }, (t) =>
    t.receive({
      from: uwe,
      at: b.ago(26, 2, 11),
      subject,
      subjectHeader: encodeText(subject, 'ISO-8859-1').toString('latin1'),
      toHeader: formatMailbox(OWNER),
      body: plain(body, { charset: 'ISO-8859-1', cte: '8bit' }),
      headers: [['X-Mailer', 'Kbox Mail 2.3 (legacy)']],
    }),
  );
  b.mark('raw8bitHeader', raw);
  b.eightBit(raw);
  b.expectedText[raw] = { subject, body };
}
