/**
 * The invented cast of the demo mailbox. Every person, company and domain here is made up;
 * personal mail uses example.com/.net/.org, companies invented names under .example, and the
 * brands that lookalike domains imitate use realistic .com names so a registrable-domain check
 * has something to bite on.
 */
import type { SeedLabel } from '../seed.js';
import type { Person } from './mime.js';

export const DEMO_ADDRESS = 'you@mailwarden.example';

/** The mailbox owner, writing from Central European time. */
export const OWNER: Person = { name: 'Jordan Hale', email: DEMO_ADDRESS, tz: 60 };

export const LABELS = {
  work: 'Label_1',
  projects: 'Label_2',
  hiring: 'Label_3',
  receipts: 'Label_4',
  travel: 'Label_5',
  family: 'Label_6',
  reports: 'Label_7',
} as const;

export const USER_LABELS: SeedLabel[] = [
  { id: LABELS.work, name: 'Work', color: { backgroundColor: '#4a86e8', textColor: '#ffffff' } },
  { id: LABELS.projects, name: 'Work/Projects' },
  { id: LABELS.hiring, name: 'Work/Hiring' },
  { id: LABELS.receipts, name: 'Receipts', color: { backgroundColor: '#16a766', textColor: '#ffffff' } },
  { id: LABELS.travel, name: 'Travel' },
  { id: LABELS.family, name: 'Family', color: { backgroundColor: '#f691b3', textColor: '#000000' } },
  { id: LABELS.reports, name: 'Work/DMARC reports' },
];

const p = (name: string, email: string, tz = 0): Person => ({ name, email, tz });

/** Colleagues at the client the owner consults for. */
export const COLLEAGUES = {
  priya: p('Priya Raman', 'priya.raman@brightfold.example', 60),
  tomas: p('Tomás Ferreira', 'tomas.ferreira@brightfold.example', 0),
  hannah: p('Hannah Cole', 'hannah.cole@brightfold.example', 60),
  oskar: p('Oskar Lindqvist', 'oskar.lindqvist@brightfold.example', 60),
  grace: p('Grace Adeyemi', 'grace.adeyemi@brightfold.example', 0),
  marcus: p('Marcus Webb', 'marcus.webb@brightfold.example', -300),
  lena: p('Lena Fischer', 'lena.fischer@brightfold.example', 60),
  ravi: p('Ravi Menon', 'ravi.menon@brightfold.example', 330),
} as const;

export const FRIENDS = {
  elise: p('Elise Hale', 'elise.hale@example.net', 0),
  mum: p('Margaret Hale', 'margaret.hale@example.org', 0),
  sam: p('Sam Ortiz', 'sam.ortiz@example.com', -300),
  noor: p('Noor Haddad', 'noor.haddad@example.net', 120),
  ben: p('Ben Carver', 'bencarver@example.com', 0),
  yuki: p('Yuki Tanabe', 'yuki.tanabe@example.org', 540),
} as const;

/** Outside contacts the owner deals with by name. */
export const CONTACTS = {
  fiona: p('Fiona Blake', 'fiona@ledgerwise.example', 0),
  landlord: p('Derek Moss', 'derek@mossproperties.example', 0),
  school: p('Maple Street Primary', 'office@maplestreet-primary.example', 0),
  plumber: p('Kettle & Sons Plumbing', 'accounts@kettleandsons.example', 0),
  recruiter: p('Ines Carvalho', 'ines@talentbridge.example', 0),
  dentist: p('Brookside Dental', 'reception@brooksidedental.example', 0),
} as const;

/** A bank that mails statements for real, and whose name phishers borrow. */
export const NORTHWIND = {
  domain: 'northwind-bank.com',
  alerts: p('Northwind Bank', 'alerts@northwind-bank.com', 0),
  statements: p('Northwind Bank', 'statements@northwind-bank.com', 0),
  /** Same label with a Greek small alpha for the second "a" (mixed-script label). */
  greekDomain: 'northwind-b\u03b1nk.com',
  /** Cyrillic small a (U+0430) in the same place, as the punycode A-label a mail client shows. */
  cyrillicDomain: 'northwind-b\u0430nk.com',
  cyrillicAce: 'xn--northwind-bnk-61k.com',
} as const;

/** A freight company whose "m" phishers write as "rn". */
export const MARLOWE = {
  domain: 'marlowefreight.com',
  lookalike: 'rnarlowefreight.com',
  tracking: p('Marlowe Freight', 'tracking@marlowefreight.com', 0),
} as const;

export const SHOPS = {
  cobble: p('Cobble & Pine', 'orders@cobbleandpine.example', 0),
  quayside: p('Quayside Outfitters', 'hello@news.quayside-outfitters.com', -300),
  tidewater: p('Tidewater Books', 'receipts@tidewater-books.com', -300),
  larkfield: p('Larkfield Air', 'noreply@larkfield-air.example', 0),
  hearth: p('Hearthstone Grocers', 'orders@hearthstone-grocers.example', 0),
  voltline: p('Voltline Energy', 'billing@voltline.example', 0),
  streamly: p('Streamly', 'no-reply@streamly.example', -480),
} as const;

export const SERVICES = {
  gitforge: p('GitForge', 'notifications@gitforge.example', 0),
  chirpline: p('Chirpline', 'notify@chirpline.example', -480),
  linkmesh: p('Linkmesh', 'messages-noreply@linkmesh.example', -480),
  kiln: p('Kiln Forum', 'digest@forum.kilnworks.example', 0),
  cloudnest: p('CloudNest', 'no-reply@cloudnest.example', -480),
  calendly: p('SlotPicker', 'notifications@slotpicker.example', 0),
} as const;
