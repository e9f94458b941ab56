/**
 * DMARC aggregate reports (RFC 7489 §7.2 and Appendix C) for the owner's domain, delivered the
 * way receivers deliver them: a zip or a gzip file holding one XML document.
 */
import { gzipFile, zipArchive } from './archives.js';
import { DAY, type CorpusBuilder } from './builder.js';
import { attachment, mixed, plain, type Person } from './mime.js';
import { LABELS } from './people.js';

interface Row {
  ip: string;
  count: number;
  dkim: 'pass' | 'fail';
  spf: 'pass' | 'fail' | 'softfail';
  dkimDomain?: string;
  disposition: 'none' | 'quarantine' | 'reject';
}

export function dmarcXml(
  org: string,
  email: string,
  reportId: string,
  begin: number,
  end: number,
  rows: Row[],
): string {
  const records = rows
    .map(
      (r) => `  <record>
    <row>
      <source_ip>${r.ip}</source_ip>
      <count>${r.count}</count>
      <policy_evaluated>
        <disposition>${r.disposition}</disposition>
        <dkim>${r.dkim}</dkim>
        <spf>${r.spf === 'pass' ? 'pass' : 'fail'}</spf>
      </policy_evaluated>
    </row>
    <identifiers>
      <header_from>mailwarden.example</header_from>
    </identifiers>
    <auth_results>
      <dkim>
        <domain>${r.dkimDomain ?? 'mailwarden.example'}</domain>
        <result>${r.dkim}</result>
        <selector>mw1</selector>
      </dkim>
      <spf>
        <domain>mailwarden.example</domain>
        <result>${r.spf}</result>
      </spf>
    </auth_results>
  </record>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8" ?>
<feedback>
  <version>1.0</version>
  <report_metadata>
    <org_name>${org}</org_name>
    <email>${email}</email>
    <report_id>${reportId}</report_id>
    <date_range>
      <begin>${Math.floor(begin / 1000)}</begin>
      <end>${Math.floor(end / 1000)}</end>
    </date_range>
  </report_metadata>
  <policy_published>
    <domain>mailwarden.example</domain>
    <adkim>r</adkim>
    <aspf>r</aspf>
    <p>quarantine</p>
    <sp>quarantine</sp>
    <pct>100</pct>
  </policy_published>
${records}
</feedback>
`;
}

const ROWS: Row[] = [
  { ip: '198.51.100.25', count: 41, dkim: 'pass', spf: 'pass', disposition: 'none' },
  { ip: '198.51.100.26', count: 7, dkim: 'pass', spf: 'pass', disposition: 'none' },
  {
    ip: '203.0.113.77',
    count: 3,
    dkim: 'fail',
    spf: 'fail',
    dkimDomain: 'mailwarden.example',
    disposition: 'quarantine',
  },
];

export function addDmarcReports(b: CorpusBuilder): void {
  const rng = b.rng('reports');
  // Reporting periods end 6 hours before `now` minus whole days (not snapped to midnight, so a
  // different `now` moves every date by exactly the same amount).
  const day = (n: number): [number, number] => {
    const end = b.ago(n, 6);
    return [end - DAY + 1000, end];
  };
  const opts = { box: 'inbox', category: 'CATEGORY_UPDATES', labels: [LABELS.reports] } as const;

  const hub: Person = { name: 'DMARC Reports', email: 'dmarc-noreply@mailhub.example' };
  const zipReport = (key: string, daysBack: number, id: string): string => {
    const [begin, end] = day(daysBack);
    const xmlName = `mailhub.example!mailwarden.example!${Math.floor(begin / 1000)}!${Math.floor(end / 1000)}.xml`;
    const zipName = xmlName.replace(/\.xml$/, '.zip');
    const xml = dmarcXml('mailhub.example', 'dmarc-noreply@mailhub.example', id, begin, end, ROWS);
    const zip = zipArchive([{ name: xmlName, data: Buffer.from(xml, 'utf8') }], end + 3 * 3600_000);
    b.thread(key, opts, (t) =>
      t.receive({
        from: hub,
        at: end + rng.int(2, 5) * 3600_000,
        subject: `Report domain: mailwarden.example Submitter: mailhub.example Report-ID: <${id}>`,
        body: mixed(
          plain('This is an aggregate DMARC report for mailwarden.example from mailhub.example.\n'),
          attachment(zipName, 'application/zip', zip),
        ),
      }),
    );
    if (daysBack === 0) b.dmarcFiles = { ...b.dmarcFiles, zip: zipName, xmlInZip: xmlName };
    return key;
  };
  b.mark('dmarcZip', zipReport('dmarc-zip-mailhub', 0, '7716482530912274419'));
  zipReport('dmarc-zip-mailhub-older', 14, '7716482530912190032');

  const post: Person = { name: 'postbox.example.net', email: 'noreply-dmarc-support@postbox.example.net' };
  const [begin, end] = day(1);
  const id = `postbox.example.net:${Math.floor(begin / 1000)}:mw`;
  const xml = dmarcXml(
    'Postbox Mail',
    'noreply-dmarc-support@postbox.example.net',
    id,
    begin,
    end,
    ROWS.slice(0, 2),
  );
  const gzName = `postbox.example.net!mailwarden.example!${Math.floor(begin / 1000)}!${Math.floor(end / 1000)}.xml.gz`;
  const gz = gzipFile(Buffer.from(xml, 'utf8'), gzName.replace(/\.gz$/, ''), end);
  const key = b.thread('dmarc-gzip-postbox', opts, (t) =>
    t.receive({
      from: post,
      at: end + rng.int(2, 5) * 3600_000,
      subject: `[Preview] Report Domain: mailwarden.example Submitter: postbox.example.net Report-ID: ${rng.hex(16)}`,
      body: mixed(
        plain('DMARC aggregate report for mailwarden.example. This message was generated automatically.\n'),
        attachment(gzName, 'application/gzip', gz),
      ),
      headers: [['Auto-Submitted', 'auto-generated']],
    }),
  );
  b.mark('dmarcGzip', key);
  b.dmarcFiles = { ...b.dmarcFiles, gzip: gzName };
}
