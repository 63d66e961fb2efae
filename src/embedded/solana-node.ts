import fs from 'node:fs';
import http from 'node:http';
import { LiteSVM, type FailedTransactionMetadata, type TransactionMetadata } from 'litesvm';
import {
  address, getBase58Decoder, getCompiledTransactionMessageDecoder, getSignatureFromTransaction, getTransactionDecoder, lamports, type Address, type Transaction,
} from '@solana/kit';
import { getMintDecoder, getTokenDecoder, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';

// The sandbox's Solana node (docs/TRANSFERS.md): Solana's runtime and its programs (System, SPL Token,
// Associated Token Account) in LiteSVM, behind the JSON-RPC methods the Solana adapter calls, with a
// slot every `slotMs`. Transactions run when they arrive (a failing one is refused, as a node's
// preflight refuses it); a transaction is `confirmed` one slot later and `finalized` FINALIZED_DEPTH
// slots later. Blocks are the slots that carry transactions (empty slots are skipped, as a
// validator skips them).

/** Slots after which a transaction counts as finalized (a cluster's 32 rooted slots). */
const FINALIZED_DEPTH = 32;
/** Slots of history kept and served (about an hour at 0.4 s). */
const HISTORY_SLOTS = 9_000;
const ALREADY_PROCESSED = 6;

interface TokenBalance { accountIndex: number; mint: string; owner: string; programId: string; uiTokenAmount: { amount: string; decimals: number; uiAmountString: string } }
interface LandedTransaction { signature: string; slot: bigint; accountKeys: string[]; err: unknown; fee: bigint; preTokenBalances: TokenBalance[]; postTokenBalances: TokenBalance[] }

class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
  }
}

/** A transaction refused in preflight: -32002 with a simulation result, as clients expect it. */
function preflightFailure(message: string, err: unknown, logs: string[] = []) {
  return new RpcError(-32002, `Transaction simulation failed: ${message}`, { err, logs, accounts: null, unitsConsumed: 0, returnData: null });
}

export class SolanaSandboxNode {
  private readonly svm: LiteSVM;
  private slot: bigint;
  private readonly genesisSlot: bigint;
  /** Blockhashes by the block height they were made at. */
  private readonly blockhashes = new Map<string, bigint>();
  private readonly bySignature = new Map<string, LandedTransaction>();
  private readonly blocks = new Map<bigint, LandedTransaction[]>();
  private readonly decimals = new Map<string, number>();
  /** Transactions naming an address that are taken and then lost, as a leader that never includes them, by address (sandbox_dropTransactionsTo). */
  private readonly toDrop = new Map<string, number>();
  /** Signatures dropped: sent again, they are dropped again (their blockhash is on no block this node builds on). */
  private readonly dropped = new Set<string>();
  private readonly blockhashValidity: bigint;
  /** A transaction has landed since the state was last saved. */
  private changed = false;

  /** `blockhashValiditySlots`: how many blocks a blockhash stays usable (Solana's 150). */
  constructor(private readonly opts: { slotMs: number; stateFile?: string; blockhashValiditySlots?: number }) {
    this.blockhashValidity = BigInt(opts.blockhashValiditySlots ?? 150);
    const saved = opts.stateFile && fs.existsSync(opts.stateFile) ? opts.stateFile : undefined;
    // A fresh node's faucet holds a billion SOL for airdrops (the treasury's fees, wallets' gas money).
    this.svm = (saved ? LiteSVM.loadFromFile(saved) : new LiteSVM().withLamports(10n ** 18n)).withBlockhashCheck(false);
    this.slot = this.svm.getClock().slot;
    this.genesisSlot = this.slot;
    if (saved) {
      // The slots go on from where the clock would be had the node run meanwhile: never back, so no
      // watcher's slot cursor is ever ahead of the transactions to come.
      const meta = JSON.parse(fs.readFileSync(`${saved}.json`, 'utf8')) as { genesisSlot: string; slot?: string; savedAt?: number };
      this.genesisSlot = BigInt(meta.genesisSlot);
      const since = meta.slot === undefined ? this.slot : BigInt(meta.slot) + BigInt(Math.floor((Date.now() - (meta.savedAt ?? Date.now())) / opts.slotMs));
      if (since > this.slot) this.svm.warpToSlot((this.slot = since));
    }
    this.blockhashes.set(this.svm.latestBlockhash(), this.height());
  }

  private height() {
    return this.slot - this.genesisSlot;
  }

  /** The next slot: a new blockhash, the clock forward, old history dropped. */
  tick() {
    this.slot += 1n;
    this.svm.warpToSlot(this.slot);
    this.svm.expireBlockhash();
    this.blockhashes.set(this.svm.latestBlockhash(), this.height());
    for (const [hash, at] of this.blockhashes) if (at + this.blockhashValidity < this.height()) this.blockhashes.delete(hash);
    const oldest = this.slot - BigInt(HISTORY_SLOTS);
    for (const [slot, txs] of this.blocks) {
      if (slot >= oldest) break;
      this.blocks.delete(slot);
      for (const tx of txs) this.bySignature.delete(tx.signature);
    }
  }

  /** Writes the state when a transaction changed it since the last save (`force`: at a stop, whatever changed). */
  save(force = false) {
    if (!this.opts.stateFile || (!this.changed && !force)) return;
    this.svm.saveToFile(`${this.opts.stateFile}.tmp`);
    fs.renameSync(`${this.opts.stateFile}.tmp`, this.opts.stateFile);
    fs.writeFileSync(`${this.opts.stateFile}.json`, JSON.stringify({ genesisSlot: String(this.genesisSlot), slot: String(this.slot), savedAt: Date.now() }));
    this.changed = false;
  }

  /** One JSON-RPC call. */
  call(method: string, params: unknown[]): unknown {
    const context = { slot: this.slot, apiVersion: '2.2.0' };
    switch (method) {
      case 'getHealth': return 'ok';
      case 'getVersion': return { 'solana-core': '2.2.0-litesvm', 'feature-set': 0 };
      case 'getSlot': return this.slotAt((params[0] as { commitment?: string } | undefined)?.commitment);
      case 'getBlockHeight': return this.height();
      case 'getLatestBlockhash':
        return { context, value: { blockhash: this.svm.latestBlockhash(), lastValidBlockHeight: this.height() + this.blockhashValidity } };
      case 'isBlockhashValid': return { context, value: this.blockhashes.has(String(params[0])) };
      case 'getMinimumBalanceForRentExemption': return this.svm.minimumBalanceForRentExemption(BigInt(params[0] as number));
      case 'getBalance': return { context, value: this.svm.getBalance(address(String(params[0]))) ?? 0n };
      case 'getAccountInfo': return { context, value: this.accountInfo(String(params[0])) };
      case 'getMultipleAccounts': return { context, value: (params[0] as string[]).map((a) => this.accountInfo(a)) };
      case 'getTokenAccountBalance': return { context, value: this.tokenAmount(String(params[0])) };
      case 'getRecentPrioritizationFees': return [];
      case 'getFeeForMessage': return { context, value: 5000n };
      case 'sendTransaction': return this.sendTransaction(String(params[0]), params[1] as { encoding?: string } | undefined);
      case 'requestAirdrop': return this.airdrop(String(params[0]), BigInt(params[1] as number));
      case 'getSignatureStatuses': return { context, value: (params[0] as string[]).map((s) => this.signatureStatus(s)) };
      case 'getBlocks': return this.blockSlots(BigInt(params[0] as number), params[1] === undefined || typeof params[1] === 'object' ? undefined : BigInt(params[1] as number));
      case 'getBlock': return this.block(BigInt(params[0] as number));
      case 'getTransaction': return this.transaction(String(params[0]));
      // The sandbox's own: the next `n` transactions naming an address are answered with their signature and never land, however often sent.
      case 'sandbox_dropTransactionsTo': this.toDrop.set(String(params[0]), Number(params[1] ?? 1)); return null;
      default: throw new RpcError(-32601, `Method not found: ${method} (the sandbox node serves the methods docs/TRANSFERS.md lists)`);
    }
  }

  /** The newest slot at a commitment: processed now, confirmed one slot back, finalized FINALIZED_DEPTH back. */
  private slotAt(commitment = 'finalized'): bigint {
    const back = commitment === 'processed' ? 0n : commitment === 'confirmed' ? 1n : BigInt(FINALIZED_DEPTH);
    return this.slot - back;
  }

  private accountInfo(key: string) {
    const account = this.svm.getAccount(address(key));
    if (!account.exists) return null;
    return { data: [Buffer.from(account.data).toString('base64'), 'base64'], executable: account.executable, lamports: account.lamports, owner: account.programAddress, rentEpoch: 0n, space: BigInt(account.data.length) };
  }

  private tokenAmount(key: string) {
    const account = this.svm.getAccount(address(key));
    if (!account.exists || account.programAddress !== TOKEN_PROGRAM_ADDRESS) throw new RpcError(-32602, 'Invalid param: not a Token account');
    const token = getTokenDecoder().decode(account.data);
    return uiAmount(token.amount, this.decimalsOf(token.mint));
  }

  private decimalsOf(mint: Address): number {
    let d = this.decimals.get(mint);
    if (d === undefined) {
      const account = this.svm.getAccount(mint);
      d = account.exists ? getMintDecoder().decode(account.data).decimals : 0;
      this.decimals.set(mint, d);
    }
    return d;
  }

  /** The token accounts among `keys`, as they are now. */
  private tokenBalances(keys: Address[]): TokenBalance[] {
    const balances: TokenBalance[] = [];
    keys.forEach((key, accountIndex) => {
      const account = this.svm.getAccount(key);
      if (!account.exists || account.programAddress !== TOKEN_PROGRAM_ADDRESS || account.data.length !== 165) return;
      const token = getTokenDecoder().decode(account.data);
      balances.push({ accountIndex, mint: token.mint, owner: token.owner, programId: TOKEN_PROGRAM_ADDRESS, uiTokenAmount: uiAmount(token.amount, this.decimalsOf(token.mint)) });
    });
    return balances;
  }

  private sendTransaction(encoded: string, config?: { encoding?: string }): string {
    if (config?.encoding !== 'base64') throw new RpcError(-32602, 'the sandbox node takes transactions in base64 (encoding: base64)');
    const bytes = Buffer.from(encoded, 'base64');
    let tx: Transaction;
    let keys: Address[];
    let lifetime: string;
    try {
      tx = getTransactionDecoder().decode(bytes);
      const compiled = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
      keys = compiled.staticAccounts;
      lifetime = compiled.lifetimeToken;
    } catch (err) {
      throw new RpcError(-32602, `invalid transaction: ${(err as Error).message}`);
    }
    const signature = getSignatureFromTransaction(tx);
    if (this.bySignature.has(signature)) throw preflightFailure('This transaction has already been processed', 'AlreadyProcessed');
    if (!this.blockhashes.has(lifetime)) throw preflightFailure('Blockhash not found', 'BlockhashNotFound');
    const dropFor = keys.find((k) => (this.toDrop.get(k) ?? 0) > 0);
    if (dropFor) {
      this.toDrop.set(dropFor, this.toDrop.get(dropFor)! - 1);
      this.dropped.add(signature);
    }
    if (this.dropped.has(signature)) return signature;
    const pre = this.tokenBalances(keys);
    const result = this.svm.sendTransaction(tx);
    if (isFailed(result)) {
      const err = result.err();
      if (err === ALREADY_PROCESSED) throw preflightFailure('This transaction has already been processed', 'AlreadyProcessed');
      throw preflightFailure(String(err), String(err), result.meta().logs());
    }
    const landed: LandedTransaction = {
      signature, slot: this.slot, accountKeys: keys, err: null, fee: 5000n * BigInt(Object.keys(tx.signatures).length),
      preTokenBalances: pre, postTokenBalances: this.tokenBalances(keys),
    };
    this.bySignature.set(signature, landed);
    this.changed = true;
    this.blocks.set(this.slot, [...(this.blocks.get(this.slot) ?? []), landed]);
    return signature;
  }

  private airdrop(to: string, amount: bigint): string {
    const result = this.svm.airdrop(address(to), lamports(amount));
    if (!result || isFailed(result)) throw new RpcError(-32603, `airdrop failed: ${result ? String(result.err()) : 'no result'}`);
    this.changed = true;
    return getBase58Decoder().decode(result.signature());
  }

  private signatureStatus(signature: string) {
    const tx = this.bySignature.get(signature);
    if (!tx) return null;
    const depth = this.slot - tx.slot;
    const confirmationStatus = depth >= FINALIZED_DEPTH ? 'finalized' : depth >= 1 ? 'confirmed' : 'processed';
    return { slot: tx.slot, confirmations: confirmationStatus === 'finalized' ? null : depth, err: tx.err, status: { Ok: null }, confirmationStatus };
  }

  /** Slots with transactions from `start` to `end` (at most 500 slots, not past the newest confirmed one). */
  private blockSlots(start: bigint, end?: bigint): bigint[] {
    const last = [end ?? this.slot, start + 499n, this.slot - 1n].reduce((a, b) => (a < b ? a : b));
    return [...this.blocks.keys()].filter((s) => s >= start && s <= last);
  }

  private block(slot: bigint) {
    const txs = this.blocks.get(slot);
    if (!txs) throw new RpcError(-32007, `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`);
    return {
      blockHeight: slot - this.genesisSlot, blockTime: null, parentSlot: slot - 1n, blockhash: `slot-${slot}`, previousBlockhash: `slot-${slot - 1n}`,
      transactions: txs.map((tx) => this.transactionBody(tx)),
    };
  }

  private transaction(signature: string) {
    const tx = this.bySignature.get(signature);
    return tx ? { slot: tx.slot, blockTime: null, ...this.transactionBody(tx) } : null;
  }

  private transactionBody(tx: LandedTransaction) {
    return {
      version: 0,
      transaction: { signatures: [tx.signature], message: { accountKeys: tx.accountKeys, instructions: [], recentBlockhash: '', header: null } },
      meta: { err: tx.err, fee: tx.fee, preBalances: [], postBalances: [], preTokenBalances: tx.preTokenBalances, postTokenBalances: tx.postTokenBalances, logMessages: [] },
    };
  }

  /** Serves JSON-RPC on `port` (loopback) and moves a slot every `slotMs` until stopped. */
  listen(port: number): Promise<{ close: () => Promise<void> }> {
    const slots = setInterval(() => this.tick(), this.opts.slotMs);
    const saves = this.opts.stateFile ? setInterval(() => this.save(), 5_000) : undefined;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const answer = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(stringify(body));
        let request: { id?: unknown; method?: string; params?: unknown[] };
        try {
          request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return answer({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
        }
        try {
          answer({ jsonrpc: '2.0', id: request.id, result: this.call(String(request.method), request.params ?? []) });
        } catch (err) {
          const e = err instanceof RpcError ? err : new RpcError(-32603, (err as Error).message);
          answer({ jsonrpc: '2.0', id: request.id, error: { code: e.code, message: e.message, data: e.data } });
        }
      });
    });
    return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve({
      close: () => new Promise<void>((done) => {
        clearInterval(slots);
        if (saves) clearInterval(saves);
        this.save(true);
        server.close(() => done());
      }),
    })));
  }
}

function isFailed(r: TransactionMetadata | FailedTransactionMetadata): r is FailedTransactionMetadata {
  return 'err' in r && typeof (r as FailedTransactionMetadata).err === 'function';
}

function uiAmount(amount: bigint, decimals: number) {
  const text = amount.toString().padStart(decimals + 1, '0');
  const whole = decimals === 0 ? text : `${text.slice(0, -decimals)}.${text.slice(-decimals)}`.replace(/\.?0+$/, '');
  return { amount: amount.toString(), decimals, uiAmountString: whole };
}

/** JSON with bigints as numbers, as Solana's RPC writes u64s. */
function stringify(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `__big${v}__` : v)).replace(/"__big(-?\d+)__"/g, '$1');
}
