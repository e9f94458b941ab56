/**
 * A loopback TCP proxy in front of a test IMAP server that adds latency and cuts or freezes
 * connections on cue. Proton Mail Bridge can take over a second per command, and real networks
 * drop connections mid-command; the provider's timeouts and reconnects are tested against this.
 *
 * Only the client→server direction is delayed (an IMAP command line is one write, so one chunk is
 * one command); replies pass at once. Bytes are bytes: TLS and STARTTLS traffic goes through
 * untouched, but faults match plaintext, so tests that need them use the server's plain port.
 */
import net from 'node:net';

interface FaultBase {
  /** Matched against each client chunk, decoded as latin1. */
  when: RegExp;
  /** Fire on every match instead of once. */
  repeat?: boolean;
}

export type ProxyFault =
  /** Destroy both sockets when a client chunk matches, after forwarding it (default) or before. */
  | (FaultBase & { kind: 'drop'; after?: 'forward' | 'before' })
  /** Forward the matching command, then cut both sockets once `afterBytes` of the reply passed. */
  | (FaultBase & { kind: 'drop-midresponse'; afterBytes: number })
  /** Forward nothing more in either direction: the client has to time out. */
  | (FaultBase & { kind: 'hang' });

export interface ImapProxyOptions {
  target: { host: string; port: number };
  delayMs?: number;
  faults?: ProxyFault[];
}

export interface ImapProxy {
  host: '127.0.0.1';
  port: number;
  /** Client chunks received so far, over all connections. */
  commandsSeen(): number;
  /** Client connections accepted so far (each one a login). */
  connectionsSeen(): number;
  setDelay(ms: number): void;
  /** Replaces the fault list; the new faults are all unspent. */
  setFaults(faults: ProxyFault[]): void;
  stop(): Promise<void>;
}

interface Queued {
  due: number;
  chunk: Buffer;
  fault: ProxyFault | undefined;
}

export async function startImapProxy(options: ImapProxyOptions): Promise<ImapProxy> {
  let delayMs = options.delayMs ?? 0;
  let faults: Array<{ fault: ProxyFault; spent: boolean }> = [];
  const setFaults = (list: ProxyFault[]): void => {
    faults = list.map((fault) => ({ fault, spent: false }));
  };
  setFaults(options.faults ?? []);
  let seen = 0;
  const sockets = new Set<net.Socket>();
  const closers = new Set<() => void>();

  // A fault is claimed when its chunk arrives, so two chunks in flight cannot both take a
  // once-only fault; it acts when that chunk's turn to be forwarded comes.
  const claim = (text: string): ProxyFault | undefined => {
    for (const entry of faults) {
      if (entry.spent || !entry.fault.when.test(text)) continue;
      if (!entry.fault.repeat) entry.spent = true;
      return entry.fault;
    }
    return undefined;
  };

  let connections = 0;
  const onConnection = (client: net.Socket): void => {
    connections++;
    const upstream = net.connect(options.target.port, options.target.host);
    sockets.add(client);
    sockets.add(upstream);
    const queue: Queued[] = [];
    let timer: NodeJS.Timeout | undefined;
    let lastDue = 0;
    let hung = false;
    let closed = false;
    // Bytes of server reply still allowed through before a drop-midresponse cut.
    let cutAfter: number | undefined;

    const close = (): void => {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      queue.length = 0;
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
      closers.delete(close);
    };
    closers.add(close);

    const forward = (item: Queued): void => {
      const fault = item.fault;
      if (!fault) {
        upstream.write(item.chunk);
        return;
      }
      switch (fault.kind) {
        case 'drop':
          if (fault.after === 'before') close();
          else upstream.write(item.chunk, () => close());
          return;
        case 'drop-midresponse':
          cutAfter = Math.max(0, fault.afterBytes);
          upstream.write(item.chunk);
          return;
        case 'hang':
          hung = true;
          queue.length = 0;
          return;
      }
    };

    const pump = (): void => {
      timer = undefined;
      while (!closed && !hung) {
        const head = queue[0];
        if (!head) return;
        const wait = head.due - Date.now();
        if (wait > 0) {
          timer = setTimeout(pump, wait);
          return;
        }
        queue.shift();
        forward(head);
      }
    };

    client.on('data', (chunk: Buffer) => {
      seen++;
      if (closed || hung) return;
      // Due times never decrease, so a shorter delay set later cannot reorder a connection.
      const due = Math.max(Date.now() + delayMs, lastDue);
      lastDue = due;
      queue.push({ due, chunk, fault: claim(chunk.toString('latin1')) });
      if (!timer) pump();
    });

    upstream.on('data', (chunk: Buffer) => {
      if (closed || hung) return;
      if (cutAfter === undefined) {
        client.write(chunk);
        return;
      }
      if (chunk.length < cutAfter) {
        cutAfter -= chunk.length;
        client.write(chunk);
        return;
      }
      const part = chunk.subarray(0, cutAfter);
      cutAfter = undefined;
      if (part.length === 0) close();
      else client.write(part, () => close());
    });

    // Either side ending or failing ends the pair; a hung pair stays open until the client gives up.
    for (const s of [client, upstream]) {
      s.on('error', close);
      s.on('close', close);
    }
  };

  const server = net.createServer(onConnection);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;

  return {
    host: '127.0.0.1',
    port,
    commandsSeen: () => seen,
    connectionsSeen: () => connections,
    setDelay(ms: number): void {
      delayMs = Math.max(0, ms);
    },
    setFaults,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const close of [...closers]) close();
        server.close(() => resolve());
      }),
  };
}
