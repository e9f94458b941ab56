/*
 * Which tool calls may take a folder check made a little earlier instead of asking again.
 *
 * On a server without LIST-STATUS (Proton Mail Bridge) knowing where a message's copies sit —
 * its labels — costs one STATUS per label folder per call (src/providers/imap/folder-index.ts).
 * A read-only tool call may use a check another call made within the account's recheck window;
 * every other call (writes, and the reads a write policy judges by) checks live. A call that
 * reused a check is told so, folder by folder with the check's age, and says so in its result.
 *
 * Keyed by the call's AbortSignal: one per tool call, so nothing leaks between calls.
 */

const readOnly = new WeakSet<AbortSignal>();
const reused = new WeakMap<AbortSignal, Map<string, number>>();
/** A signal derived for the same call (a budget's) → the call's own. */
const parents = new WeakMap<AbortSignal, AbortSignal>();

const callOf = (signal: AbortSignal): AbortSignal => {
  let s = signal;
  for (let p = parents.get(s); p !== undefined; p = parents.get(s)) s = p;
  return s;
};

/** Marks a call as read-only: it may reuse recent checks. */
export function markReadOnlyCall(signal: AbortSignal): void {
  readOnly.add(signal);
}

/** `derived` (e.g. AbortSignal.any of the call's and a budget's) belongs to `call`. */
export function sameCall(derived: AbortSignal, call: AbortSignal): void {
  if (derived !== call) parents.set(derived, call);
}

export function isReadOnlyCall(signal: AbortSignal | undefined): boolean {
  return signal !== undefined && readOnly.has(callOf(signal));
}

/** Records that this call took `place`'s check from `ageMs` ago instead of asking. */
export function noteReusedCheck(signal: AbortSignal, place: string, ageMs: number): void {
  const call = callOf(signal);
  let m = reused.get(call);
  if (m === undefined) {
    m = new Map();
    reused.set(call, m);
  }
  m.set(place, Math.max(m.get(place) ?? 0, ageMs));
}

export interface ReusedChecks {
  /** Folders whose contents this call took from an earlier check, by name. */
  places: string[];
  /** Age of the oldest such check, in whole seconds (rounded up). */
  oldestSeconds: number;
}

/** What this call took from earlier checks; undefined when it checked everything live. */
export function reusedChecks(signal: AbortSignal): ReusedChecks | undefined {
  const m = reused.get(callOf(signal));
  if (m === undefined || m.size === 0) return undefined;
  return { places: [...m.keys()].sort(), oldestSeconds: Math.ceil(Math.max(...m.values()) / 1000) };
}

/*
 * A search lists threads; it does not need every label of every thread to be proven. On a server
 * without LIST-STATUS (Proton Mail Bridge) proving them means indexing every folder a thread could
 * sit in (a header FETCH of each whole folder) on the first call, a cost that grows with the
 * mailbox. A listing call of an inbox-only query therefore locates copies only in the folders
 * already indexed (INBOX always is) and names the others here: the result says which folders it
 * did not look in, so a label from them is not shown and its absence proves nothing.
 */
const listing = new WeakSet<AbortSignal>();
const unchecked = new WeakMap<AbortSignal, Set<string>>();

/** Marks a call as one that lists threads (search): it may leave folders unchecked, naming them. */
export function markListingCall(signal: AbortSignal): void {
  listing.add(callOf(signal));
}

export function isListingCall(signal: AbortSignal | undefined): boolean {
  return signal !== undefined && listing.has(callOf(signal));
}

/** Records that this call did not look for copies in `place`. */
export function noteUncheckedPlace(signal: AbortSignal, place: string): void {
  const call = callOf(signal);
  let s = unchecked.get(call);
  if (s === undefined) {
    s = new Set();
    unchecked.set(call, s);
  }
  s.add(place);
}

/** The folders this call did not look in, sorted; undefined when it looked everywhere it needed. */
export function uncheckedPlaces(signal: AbortSignal): string[] | undefined {
  const s = unchecked.get(callOf(signal));
  return s === undefined || s.size === 0 ? undefined : [...s].sort();
}

/*
 * A read that shows one thread or message (get_thread, get_message) has the same problem on its
 * first call after start: its labels need every label folder's index, an EXAMINE and a header
 * FETCH of each (28 commands on the Bridge profile, over the 6 a warm read may cost). Such a
 * call, when its result can name the folders it did not look in (the server marks it), builds
 * missing indexes only while it stays within what a warm read may cost
 * (src/providers/imap/threads.ts) and names the rest in uncheckedPlaces; later calls build them.
 * A search is never such a call: it re-checks location predicates (and the implicit -in:spam
 * -in:trash) on the labels it reads, which an unchecked folder would falsify.
 */
const reportsUnchecked = new WeakSet<AbortSignal>();
const everyPlace = new WeakSet<AbortSignal>();

/** Marks a read-only call whose result can say which folders it did not look in. */
export function markReportsUnchecked(signal: AbortSignal): void {
  reportsUnchecked.add(signal);
}

/** Marks a call that judges labels (a search's re-check): it locates copies everywhere. */
export function markEveryPlaceCall(signal: AbortSignal): void {
  everyPlace.add(callOf(signal));
}

/** Whether this call may leave folders without an index unchecked, naming them. */
export function isBudgetedCall(signal: AbortSignal | undefined): boolean {
  if (signal === undefined) return false;
  const call = callOf(signal);
  return readOnly.has(call) && reportsUnchecked.has(call) && !everyPlace.has(call) && !listing.has(call);
}
