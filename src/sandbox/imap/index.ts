/**
 * Real IMAP for tests, benchmarks and `mailwarden demo --imap`: throwaway Dovecot servers in two
 * profiles (plain Dovecot, a Proton Mail Bridge imitation), a latency/fault proxy, and seeding
 * from the same SeedUser the Gmail sandbox uses.
 */
export { startDovecot } from './dovecot.js';
export { processGroupAlive } from './process.js';
export type { DovecotOptions, DovecotServer } from './dovecot.js';
export { BRIDGE_CAPABILITY, bridgeCapability, FOLDERS, virtualMailboxes } from './dovecot-config.js';
export type { BridgeOptions, DovecotProfile, FolderLayout, VirtualMailbox } from './dovecot-config.js';
export { GLUON_ID_HEADER, startBridgeFront, withGluonId } from './bridge-front.js';
export type { BridgeFront, BridgeFrontOptions, RecordedCommand, SizeDelay } from './bridge-front.js';
export { startImapProxy } from './proxy.js';
export type { ImapProxy, ImapProxyOptions, ProxyFault } from './proxy.js';
export {
  appendMessage,
  keywordForLabel,
  placeMessage,
  recreateMailbox,
  seedDovecot,
  withClient as withMailClient,
} from './seed.js';
export type { AppendOptions, Placement, SeedOptions, SeedReport } from './seed.js';
