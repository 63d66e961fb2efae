import {
  createSolanaRpc, devnet, getBase64Encoder, getSignatureFromTransaction, lamports, getCompiledTransactionMessageDecoder, getTransactionDecoder, type Address, type Commitment, type Signature,
} from '@solana/kit';
import { findAssociatedTokenPda, getTokenDecoder, TOKEN_PROGRAM_ADDRESS, type Token } from '@solana-program/token';

/** A token balance that moved in one transaction: who holds the token account, and by how much it changed. */
export interface TokenMovement {
  signature: string;
  slot: bigint;
  mint: string;
  owner: string;
  deltaMinor: bigint;
}

/**
 * A Solana cluster over JSON-RPC, through @solana/kit: the sandbox's LiteSVM node locally, any RPC
 * provider in production. Only the methods docs/TRANSFERS.md lists are called.
 */
export class SolanaNode {
  readonly rpc: ReturnType<typeof createSolanaRpc>;

  /** `commitment`: how deep a deposit must be to count (`confirmed` on a local node, `finalized` elsewhere). */
  constructor(private readonly url: string, readonly commitment: 'confirmed' | 'finalized') {
    this.rpc = createSolanaRpc(url);
  }

  /** SOL for an address, from a cluster that gives it away (the sandbox's node; devnet). */
  async airdrop(to: Address, amount: bigint): Promise<void> {
    await createSolanaRpc(devnet(this.url)).requestAirdrop(to, lamports(amount)).send();
  }

  /** The newest confirmed slot, and the newest one deep enough for a deposit to count. */
  async tips(): Promise<{ latest: bigint; counted: bigint }> {
    const [latest, counted] = await Promise.all([
      this.rpc.getSlot({ commitment: 'confirmed' }).send(),
      this.rpc.getSlot({ commitment: this.commitment }).send(),
    ]);
    return { latest, counted };
  }

  async associatedTokenAccount(owner: Address, mint: Address): Promise<Address> {
    const [ata] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    return ata;
  }

  /** What an account holds, when it is an SPL token account; `null` when it does not exist; `invalid` when it is something else. */
  async tokenAccount(account: Address, commitment: Commitment = 'confirmed'): Promise<Token | null | 'invalid'> {
    const { value } = await this.rpc.getAccountInfo(account, { encoding: 'base64', commitment }).send();
    if (!value) return null;
    if (value.owner !== TOKEN_PROGRAM_ADDRESS || value.space !== 165n) return 'invalid';
    return getTokenDecoder().decode(getBase64Encoder().encode(value.data[0]));
  }

  /** What a token account holds (0 when it does not exist), and the slot the node read it at. */
  async tokenAmountAt(account: Address, commitment: Commitment): Promise<{ slot: bigint; amount: bigint }> {
    const { context, value } = await this.rpc.getAccountInfo(account, { encoding: 'base64', commitment }).send();
    const isToken = value && value.owner === TOKEN_PROGRAM_ADDRESS && value.space === 165n;
    return { slot: context.slot, amount: isToken ? getTokenDecoder().decode(getBase64Encoder().encode(value.data[0])).amount : 0n };
  }

  /** Who owns the account, or null when it does not exist. */
  async ownerProgram(account: Address): Promise<Address | null> {
    const { value } = await this.rpc.getAccountInfo(account, { encoding: 'base64' }).send();
    return value ? value.owner : null;
  }

  /** Sends a signed transaction (base64 wire bytes); one the cluster has already taken is not an error. */
  async broadcast(wire: string): Promise<void> {
    try {
      await this.rpc.sendTransaction(wire as never, { encoding: 'base64', preflightCommitment: 'confirmed' }).send();
    } catch (err) {
      if (/already been processed|AlreadyProcessed/.test(errorText(err))) return;
      throw err;
    }
  }

  async signatureStatus(signature: string) {
    const { value } = await this.rpc.getSignatureStatuses([signature as Signature], { searchTransactionHistory: true }).send();
    return value[0] ?? null;
  }

  /** Whether a stored transaction can still land: its blockhash has not expired. */
  async canStillLand(wire: string): Promise<boolean> {
    const tx = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
    const { lifetimeToken } = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
    return (await this.rpc.isBlockhashValid(lifetimeToken as never, { commitment: 'processed' }).send()).value;
  }

  /**
   * Every token balance that moved in the blocks from `fromSlot` to `toSlot` (at most 500 slots a
   * call): read from each transaction's token balances before and after, as Solana indexers read them.
   * Returns the movements and the last slot read.
   */
  async tokenMovements(fromSlot: bigint, toSlot: bigint): Promise<{ movements: TokenMovement[]; lastSlot: bigint }> {
    const lastSlot = toSlot < fromSlot + 499n ? toSlot : fromSlot + 499n;
    if (lastSlot < fromSlot) return { movements: [], lastSlot: fromSlot - 1n };
    const slots = await this.rpc.getBlocks(fromSlot, lastSlot, { commitment: 'confirmed' }).send();
    const movements: TokenMovement[] = [];
    for (const slot of slots) {
      const block = await this.rpc.getBlock(slot, {
        commitment: 'confirmed', encoding: 'json', transactionDetails: 'full', maxSupportedTransactionVersion: 0, rewards: false,
      }).send();
      for (const tx of block?.transactions ?? []) movements.push(...tokenBalanceChanges(tx, slot));
    }
    return { movements, lastSlot };
  }

  /** The token balances a transaction changed (each token account's, with its index), or null when the node does not know it. */
  async transactionMovements(signature: string): Promise<(TokenMovement & { accountIndex: number })[] | null> {
    const tx = await this.rpc.getTransaction(signature as Signature, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
    return tx ? tokenBalanceChanges(tx, tx.slot) : null;
  }
}

interface TokenBalance { accountIndex: number; mint: string; owner?: string; uiTokenAmount: { amount: string } }

/** A transaction's token balances before and after, as Solana indexers read them: each account's change (none for a failed one). */
function tokenBalanceChanges(
  tx: { transaction: { signatures: readonly string[] }; meta: { err: unknown; preTokenBalances?: readonly TokenBalance[] | null; postTokenBalances?: readonly TokenBalance[] | null } | null },
  slot: bigint,
): (TokenMovement & { accountIndex: number })[] {
  if (!tx.meta || tx.meta.err) return [];
  const signature = tx.transaction.signatures[0]!;
  const change = new Map<number, { mint: string; owner: string; delta: bigint }>();
  const add = (b: TokenBalance, sign: bigint) => {
    const now = change.get(b.accountIndex) ?? { mint: b.mint, owner: b.owner ?? '', delta: 0n };
    now.delta += sign * BigInt(b.uiTokenAmount.amount);
    change.set(b.accountIndex, now);
  };
  for (const b of tx.meta.preTokenBalances ?? []) add(b, -1n);
  for (const b of tx.meta.postTokenBalances ?? []) add(b, 1n);
  return [...change].filter(([, c]) => c.delta !== 0n)
    .map(([accountIndex, c]) => ({ signature, slot, mint: c.mint, owner: c.owner, deltaMinor: c.delta, accountIndex }));
}

/** A transaction's signature (its id on the chain), from its base64 wire bytes. */
export function signatureOf(wire: string): string {
  return getSignatureFromTransaction(getTransactionDecoder().decode(getBase64Encoder().encode(wire)));
}

export function errorText(err: unknown): string {
  const e = err as { message?: string; context?: unknown; cause?: unknown };
  return [e?.message, JSON.stringify(e?.context ?? null, (_k, v) => (typeof v === 'bigint' ? String(v) : v)), e?.cause ? errorText(e.cause) : ''].join(' ');
}
