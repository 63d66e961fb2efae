import { hex } from '@scure/base';
import { ASSET_SCALE, parseAmount } from '../../domain/money';

/** An error the node answered (a JSON-RPC error), with its code. */
export class BitcoinRpcError extends Error {
  override name = 'BitcoinRpcError';
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/** Codes btcd and Bitcoin Core answer for a transaction they already have (in the mempool or a block). */
const ALREADY_KNOWN = /already (have|in block chain|exists)|txn-already-known|txn-already-in-mempool|transaction already in block chain/i;

/**
 * A Bitcoin node's JSON-RPC (btcd or Bitcoin Core), the methods both serve: getblockcount,
 * getblockhash, getblock (raw), sendrawtransaction, estimatesmartfee (Core) or estimatefee (btcd);
 * and on the sandbox's node generate and invalidateblock. Credentials ride in the URL.
 */
export class BitcoinRpc {
  private readonly endpoint: string;
  private readonly authorization: string | undefined;
  private nextId = 1;
  /** Whether the node serves estimatesmartfee (Bitcoin Core) or only estimatefee (btcd): learnt on the first ask. */
  private smartFees: boolean | undefined;

  constructor(url: string) {
    const parsed = new URL(url);
    this.authorization = parsed.username ? `Basic ${Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString('base64')}` : undefined;
    parsed.username = '';
    parsed.password = '';
    this.endpoint = parsed.toString();
  }

  async call<T>(method: string, params: unknown[] = []): Promise<T> {
    const res = await fetch(this.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(this.authorization ? { authorization: this.authorization } : {}) },
      body: JSON.stringify({ jsonrpc: '1.0', id: this.nextId++, method, params }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let body: { result?: T; error?: { code: number; message: string } | null };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new Error(`bitcoin node ${method}: HTTP ${res.status}: ${text.slice(0, 200)}`);
    }
    if (body.error) throw new BitcoinRpcError(body.error.code, `bitcoin node ${method}: ${body.error.message}`);
    return body.result as T;
  }

  blockCount(): Promise<number> {
    return this.call<number>('getblockcount');
  }

  blockHash(height: number): Promise<string> {
    return this.call<string>('getblockhash', [height]);
  }

  /**
   * The hash at `height`, or null when the node answers that it has no block there (its chain is
   * shorter after a reorganisation: btcd -1, Bitcoin Core -8, "out of range"). A node that does not
   * answer is an error, never a missing block.
   */
  async blockHashIfAny(height: number): Promise<string | null> {
    try {
      return await this.blockHash(height);
    } catch (err) {
      if (err instanceof BitcoinRpcError) return null;
      throw err;
    }
  }

  rawBlock(hash: string): Promise<string> {
    return this.call<string>('getblock', [hash, 0]);
  }

  /**
   * A transaction's raw bytes (hex), or null when the node knows no such transaction. The node keeps
   * an index of every transaction for this (btcd `--txindex`, Bitcoin Core `txindex=1`).
   */
  async rawTransaction(txid: string): Promise<string | null> {
    try {
      return await this.call<string>('getrawtransaction', [txid, 0]);
    } catch (err) {
      if (err instanceof BitcoinRpcError && err.code === -5) return null; // no information about it
      throw err;
    }
  }

  /** Broadcasts a signed transaction; one the node already has counts as sent. */
  async sendRawTransaction(raw: Uint8Array): Promise<void> {
    try {
      await this.call('sendrawtransaction', [hex.encode(raw)]);
    } catch (err) {
      if (err instanceof BitcoinRpcError && ALREADY_KNOWN.test(err.message)) return;
      throw err;
    }
  }

  /** The node's fee rate for a block within `blocks`, in satoshis per virtual byte (rounded up); undefined without an estimate. */
  async feeRate(blocks: number): Promise<bigint | undefined> {
    let btcPerKvB: number | undefined;
    if (this.smartFees !== false) {
      try {
        btcPerKvB = (await this.call<{ feerate?: number }>('estimatesmartfee', [blocks])).feerate;
        this.smartFees = true;
      } catch (err) {
        if (!(err instanceof BitcoinRpcError) || this.smartFees) throw err;
        this.smartFees = false;
      }
    }
    // btcd has no estimatesmartfee; its estimatefee answers an error until it has seen enough blocks.
    if (this.smartFees === false) btcPerKvB = await this.call<number>('estimatefee', [blocks]).catch(() => undefined);
    if (btcPerKvB === undefined || !(btcPerKvB > 0)) return undefined;
    const satsPerKvB = parseAmount(btcPerKvB.toFixed(ASSET_SCALE.btc!), ASSET_SCALE.btc!);
    return satsPerKvB === null ? undefined : (satsPerKvB + 999n) / 1000n;
  }
}
