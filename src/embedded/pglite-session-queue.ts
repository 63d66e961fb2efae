import type { PGlite } from '@electric-sql/pglite';

/**
 * The order in which PGlite's one session runs the wire-protocol messages of the socket server's
 * connections. pglite-socket's own queue hands the session to another connection between any two
 * messages outside a transaction, so one connection's Parse/Bind/Execute/Sync can run against
 * another's unnamed statement: errors ("bind message supplies 3 parameters, but prepared statement
 * requires 1") or, worse, another query's rows (electric-sql/pglite#1046). Here a connection keeps
 * the session from its first message of an extended-query cycle until the Sync that ends it, and for
 * as long as it holds a transaction open; a connection that goes away gives the session back.
 * It is the interface of pglite-socket's QueryQueueManager, which the server calls.
 */
export class PgliteSessionQueue {
  private readonly waiting: QueuedMessage[] = [];
  /** The connection in the middle of an extended-query cycle or a transaction: only its messages run. */
  private owner: number | null = null;
  private draining = false;

  constructor(private readonly db: PGlite) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ handlerId, message, onData, resolve, reject });
      void this.drain();
    });
  }

  getQueueLength(): number {
    return this.waiting.length;
  }

  /** The connection closed: its waiting messages are dropped. */
  clearQueueForHandler(handlerId: number): void {
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      if (this.waiting[i]!.handlerId !== handlerId) continue;
      this.waiting.splice(i, 1)[0]!.reject(new Error('the connection closed'));
    }
  }

  /** The connection closed: a transaction it left open is rolled back and the session goes on to the others. */
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.owner !== handlerId) return;
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    this.owner = null;
    await this.drain();
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      for (;;) {
        const next = this.owner === null ? 0 : this.waiting.findIndex((m) => m.handlerId === this.owner);
        if (next < 0 || next >= this.waiting.length) return; // the owner's next message has not come yet
        const [m] = this.waiting.splice(next, 1);
        await this.run(m!);
      }
    } finally {
      this.draining = false;
    }
  }

  private async run(m: QueuedMessage): Promise<void> {
    let bytes = 0;
    try {
      await this.db.runExclusive(() => this.db.execProtocolRawStream(m.message, {
        onRawData: (data) => {
          bytes += data.length;
          m.onData(data);
        },
      }));
    } catch (err) {
      // The connection is closed on this (the server's handler); a transaction it held is rolled back then.
      this.owner = this.db.isInTransaction() ? m.handlerId : null;
      m.reject(err);
      return;
    }
    this.owner = continuesCycle(m.message) || this.db.isInTransaction() ? m.handlerId : null;
    m.resolve(bytes);
  }
}

interface QueuedMessage {
  handlerId: number;
  message: Uint8Array;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (err: unknown) => void;
}

/** Parse, Bind, Describe, Execute, Close and Flush: the cycle goes on until its Sync. */
const CYCLE_MESSAGES = new Set(['P', 'B', 'D', 'E', 'C', 'H'].map((c) => c.charCodeAt(0)));

function continuesCycle(message: Uint8Array): boolean {
  return message.length > 0 && CYCLE_MESSAGES.has(message[0]!);
}
