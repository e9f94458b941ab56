/**
 * The dovecot.conf of a throwaway server, per profile. Pure text: dovecot.ts writes it into the
 * instance's temp dir and starts Dovecot on it. Everything Dovecot would otherwise take from
 * /etc/dovecot is set here, so the packaged config never leaks in.
 */

/**
 * `full`: Dovecot as a well-equipped provider runs it (every extension, keywords, All Mail).
 * `bridge`: an imitation of Proton Mail Bridge (ProtonMail/gluon): its capability list, its folder
 * layout (Folders/…, Labels/…, Starred, Spam, All Mail) and no keywords.
 */
export type DovecotProfile = 'full' | 'bridge';

/**
 * Settings a Bridge user or a Bridge version changes (bridge profile only): Bridge's "Show All
 * Mail" setting (proton-bridge internal/services/imapservice/connector.go GetMailboxVisibility
 * hides the mailbox when it is off) and IDLE, which a later gluon can switch off.
 */
export interface BridgeOptions {
  /** Default true. */
  allMail?: boolean;
  /** Default true. */
  idle?: boolean;
}

/** Where each role lives in a profile; seeding and tests read names from here, never guess. */
export interface FolderLayout {
  inbox: 'INBOX';
  sent: string;
  drafts: string;
  junk: string;
  trash: string;
  archive: string;
  /** Virtual (\All). full: everything but junk and trash (Gmail's rule); bridge: everything,
   * Spam and Trash included, but label copies (Proton's All Mail is a label every message has). */
  all: string;
  /** Virtual (\Flagged), Bridge's Starred. */
  flagged?: string;
  /** Parent of user folders (Bridge: Folders/X). */
  foldersRoot?: string;
  /** Parent of label folders (Bridge: Labels/X, one copy of the message per label). */
  labelsRoot?: string;
}

export const FOLDERS: Readonly<Record<DovecotProfile, Readonly<FolderLayout>>> = {
  full: {
    inbox: 'INBOX',
    sent: 'Sent',
    drafts: 'Drafts',
    junk: 'Junk',
    trash: 'Trash',
    archive: 'Archive',
    all: 'All Mail',
  },
  bridge: {
    inbox: 'INBOX',
    sent: 'Sent',
    drafts: 'Drafts',
    junk: 'Spam',
    trash: 'Trash',
    archive: 'Archive',
    all: 'All Mail',
    flagged: 'Starred',
    foldersRoot: 'Folders',
    labelsRoot: 'Labels',
  },
};

/**
 * gluon's post-authentication list, in its order. Dovecot uses the same setting before login and
 * adds STARTTLS (again, on the plain port before TLS) and AUTH=… there itself.
 */
export const BRIDGE_CAPABILITY = 'ID IDLE IMAP4rev1 MOVE STARTTLS UIDPLUS UNSELECT';

/** The capability list of a bridge profile with these options (IDLE can be off). */
export function bridgeCapability(options: BridgeOptions = {}): string {
  return BRIDGE_CAPABILITY.split(' ')
    .filter((c) => c !== 'IDLE' || options.idle !== false)
    .join(' ');
}

export interface RunAs {
  internalUser: string;
  internalGroup: string;
  loginUser: string;
  uid: number;
  gid: number;
  root: boolean;
}

export interface VirtualMailbox {
  /** Directory name under <dir>/virtual. */
  key: string;
  /** The visible mailbox name: the namespace prefix without its separator. */
  name: string;
  specialUse: string;
  /** dovecot-virtual: mailbox patterns (a leading "-" excludes), then an indented search. */
  definition: string;
}

/**
 * All Mail as Dovecot's virtual plugin sees it. Each virtual mailbox is the root of a namespace
 * whose prefix is the mailbox's name ("All Mail/"): Dovecot opens the namespace root as the
 * mailbox, so it sits at the top level next to INBOX, as Gmail's and Bridge's do.
 */
export function virtualMailboxes(profile: DovecotProfile, bridge: BridgeOptions = {}): VirtualMailbox[] {
  const layout = FOLDERS[profile];
  if (profile === 'full') {
    // Any folder a user makes is in All Mail too; only junk and trash stay out (Gmail's rule).
    const sources = ['INBOX', 'Archive', 'Sent', 'Drafts', '*', '-Trash', '-Trash/*', '-Junk', '-Junk/*'];
    return [{ key: 'all', name: layout.all, specialUse: '\\All', definition: virtualFile(sources, 'all') }];
  }
  // Bridge: label folders hold copies of messages already elsewhere, so they stay out. Proton
  // labels every message with All Mail, spam and trash included (proton-bridge's
  // RemoveMessagesFromMailbox skips AllMail when it decides what else a message is in).
  const sources = ['INBOX', 'Archive', 'Sent', 'Drafts', 'Folders/*'];
  const everything = [...sources, layout.junk, layout.trash];
  return [
    ...(bridge.allMail === false
      ? []
      : [{ key: 'all', name: layout.all, specialUse: '\\All', definition: virtualFile(everything, 'all') }]),
    {
      key: 'starred',
      name: layout.flagged ?? 'Starred',
      specialUse: '\\Flagged',
      definition: virtualFile(sources, 'flagged'),
    },
  ];
}

function virtualFile(patterns: string[], search: string): string {
  return `${patterns.join('\n')}\n  ${search}\n`;
}

export interface ConfigInput {
  profile: DovecotProfile;
  instanceName: string;
  dir: string;
  home: string;
  logPath: string;
  passwdPath: string;
  certPath: string;
  keyPath: string;
  tlsPort: number;
  plainPort: number;
  sievePort: number | undefined;
  runAs: RunAs;
  bridge?: BridgeOptions;
}

function mailboxBlock(name: string, lines: string[]): string {
  return [`  mailbox "${name}" {`, ...lines.map((l) => `    ${l}`), '  }'].join('\n');
}

export function renderDovecotConfig(c: ConfigInput): string {
  const layout = FOLDERS[c.profile];
  const virtuals = virtualMailboxes(c.profile, c.bridge);
  const real: Array<[string, string | undefined]> = [
    [layout.drafts, '\\Drafts'],
    [layout.sent, '\\Sent'],
    [layout.archive, '\\Archive'],
    [layout.junk, '\\Junk'],
    [layout.trash, '\\Trash'],
    ...(layout.foldersRoot ? [[layout.foldersRoot, undefined] as [string, undefined]] : []),
    ...(layout.labelsRoot ? [[layout.labelsRoot, undefined] as [string, undefined]] : []),
  ];
  const mailboxes = [
    ...real.map(([name, use]) =>
      mailboxBlock(name, [...(use ? [`special_use = ${use}`] : []), 'auto = subscribe']),
    ),
    // The attribute is looked up by name in the namespace that lists the mailbox: declaring it
    // here (without auto) is what makes LIST show \All on the virtual namespace's root.
    ...virtuals.map((v) => mailboxBlock(v.name, [`special_use = ${v.specialUse}`])),
  ];
  const virtualNamespaces = virtuals.map((v) =>
    [
      `namespace virtual_${v.key} {`,
      '  separator = /',
      `  prefix = "${v.name}/"`,
      `  location = virtual:${c.dir}/virtual/${v.key}:INDEX=${c.home}/virtual-index/${v.key}`,
      '  list = yes',
      '  subscriptions = no',
      '}',
    ].join('\n'),
  );
  // Without root, nothing can chroot or switch users: every service runs as the caller.
  const chroot = c.runAs.root ? [] : ['  chroot ='];
  const sieve = c.sievePort !== undefined;
  return [
    '# Generated by mailwarden (src/sandbox/imap): a throwaway test server.',
    `instance_name = ${c.instanceName}`,
    `base_dir = ${c.dir}/run`,
    `state_dir = ${c.dir}/state`,
    `log_path = ${c.logPath}`,
    'listen = 127.0.0.1',
    `protocols = imap${sieve ? ' sieve' : ''}`,
    'ssl = yes',
    `ssl_cert = <${c.certPath}`,
    `ssl_key = <${c.keyPath}`,
    'disable_plaintext_auth = no',
    'auth_mechanisms = plain login',
    `default_internal_user = ${c.runAs.internalUser}`,
    `default_internal_group = ${c.runAs.internalGroup}`,
    `default_login_user = ${c.runAs.loginUser}`,
    // The package's dovecot user has a system uid, below the default floor of 500.
    'first_valid_uid = 1',
    'first_valid_gid = 1',
    'mail_location = maildir:~/Maildir:LAYOUT=fs',
    // A test server's mail is worth nothing after the run; fsync per APPEND only costs time.
    'mail_fsync = never',
    'mail_plugins = $mail_plugins virtual',
    ...(c.profile === 'bridge'
      ? [
          // The profile's front end (bridge-front.ts) states gluon's lists to clients; this is
          // what a client on the plain port sees.
          `imap_capability = ${bridgeCapability(c.bridge)}`,
        ]
      : []),
    'passdb {',
    '  driver = passwd-file',
    `  args = scheme=PLAIN ${c.passwdPath}`,
    '}',
    'userdb {',
    '  driver = static',
    `  args = uid=${c.runAs.uid} gid=${c.runAs.gid} home=${c.home}`,
    '}',
    'service imap-login {',
    ...chroot,
    '  inet_listener imap {',
    `    port = ${c.plainPort}`,
    '  }',
    '  inet_listener imaps {',
    `    port = ${c.tlsPort}`,
    '    ssl = yes',
    '  }',
    '}',
    ...(sieve
      ? [
          'service managesieve-login {',
          ...chroot,
          '  inet_listener sieve {',
          `    port = ${c.sievePort}`,
          '  }',
          '}',
          'plugin {',
          '  sieve = file:~/sieve;active=~/.dovecot.sieve',
          '}',
        ]
      : []),
    ...(c.runAs.root ? [] : ['service anvil {', ...chroot, '}']),
    'namespace inbox {',
    '  inbox = yes',
    '  separator = /',
    '  prefix =',
    ...mailboxes,
    '}',
    ...virtualNamespaces,
    '',
  ].join('\n');
}
