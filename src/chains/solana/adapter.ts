import { address, createKeyPairSignerFromPrivateKeyBytes, type Address } from '@solana/kit';
import { AccountState, getCreateAssociatedTokenIdempotentInstructionAsync, getMintToCheckedInstruction } from '@solana-program/token';
import { ASSET_SCALE } from '../../domain/money';
import { randomBase62 } from '../../ids';
import { RAILS } from '../../domain/rails';
import type { Db } from '../../db';
import {
  ChainUnavailableError, PayoutRejectedError, type AssetBalance, type ChainAdapter, type ChainMovement, type PayoutRequest, type PayoutStatus, type PreparedWalletTransaction,
  type SandboxChainFunding, type SweepRequest, type SweepStatus, type TokenTransferPage, type TransferScan, type TreasuryHoldings, type WalletSendRequest,
} from '../chain-adapter';
import { walletSolanaSeed, type SolanaKeys } from './keys';
import { SolanaNode, type TokenMovement } from './node';
import { SolanaPaymentSends, sweepOnce, walletSendOnce } from './sends';
import { memoInstruction, resignWithFreshBlockhash, signInstructions, signTokenTransfer } from './transactions';

/** The signature fee, per signature (lamports): Solana's base fee. */
const SIGNATURE_FEE = 5_000n;
/** A token account's size: its rent-exempt minimum is what creating one costs. */
const TOKEN_ACCOUNT_SIZE = 165n;
const SYSTEM_PROGRAM = address('11111111111111111111111111111111');

/**
 * Solana over JSON-RPC (@solana/kit): USDC and USDT as SPL tokens in associated token accounts. The
 * treasury pays every transaction's fee, so deposit addresses and wallets need no SOL of their own.
 * A deposit address is an owner key; its token account is the associated one for the mint.
 */
export class SolanaChainAdapter implements ChainAdapter, SandboxChainFunding {
  readonly chain = 'solana' as const;
  readonly nativeAsset = 'sol';
  readonly sweepsDeposits = true;
  readonly walletsPayGas = false;
  private readonly node: SolanaNode;
  private readonly sends: SolanaPaymentSends;

  constructor(url: string, private readonly deps: { db: Db; keys: SolanaKeys; commitment: 'confirmed' | 'finalized'; mint: (currency: string) => Address }) {
    this.node = new SolanaNode(url, deps.commitment);
    // A payout's only signer is the treasury (fee payer and the tokens' authority).
    this.sends = new SolanaPaymentSends(this.node, deps.db, async (stored) => resignWithFreshBlockhash(this.node, stored, [await deps.keys.treasury.signer()]));
  }

  /** The chain's currencies whose mints are set up here, by mint address. */
  private mints(): Map<string, string> {
    const found = new Map<string, string>();
    for (const currency of RAILS.solana.currencies) {
      try {
        found.set(this.deps.mint(currency), currency);
      } catch (err) {
        if (!(err instanceof ChainUnavailableError)) throw err;
      }
    }
    return found;
  }

  depositAddress(index: number): string {
    return this.deps.keys.deposit(index).address;
  }

  async checkCurrency(currency: string): Promise<void> {
    const mint = this.deps.mint(currency);
    if (!(await this.node.ownerProgram(mint))) throw new ChainUnavailableError(`The ${currency} mint ${mint} does not exist on this Solana cluster`);
  }

  isTokenContract(candidate: string): boolean {
    return this.mints().has(candidate);
  }

  async currentPosition(): Promise<string> {
    return (await this.node.tips()).latest.toString();
  }

  /**
   * A receiver that cannot take the token: an address that is itself a program's account (a token
   * account, a mint: the tokens would be lost), or whose token account is frozen (the issuer's
   * freeze, USDC's blocklist).
   */
  async receiverRefusal(currency: string, to: string): Promise<string | undefined> {
    let owner: Address;
    try {
      owner = address(to);
    } catch {
      return `${to} is not a Solana address`;
    }
    const program = await this.node.ownerProgram(owner);
    if (program && program !== SYSTEM_PROGRAM) return `${to} is an account of program ${program}, not a wallet: tokens sent to it would be lost`;
    const account = await this.node.tokenAccount(await this.node.associatedTokenAccount(owner, this.deps.mint(currency)));
    if (account !== null && account !== 'invalid' && account.state === AccountState.Frozen) return `the ${currency} token account of ${to} on solana is frozen`;
    return undefined;
  }

  async findTransfersTo(q: { currency: string; addresses: string[]; fromPosition: string }): Promise<TransferScan> {
    const { latest, counted } = await this.node.tips();
    const from = BigInt(q.fromPosition);
    if (counted < from || q.addresses.length === 0) return { transfers: [], nextPosition: q.fromPosition, caughtUp: true };
    const { movements, lastSlot } = await this.node.tokenMovements(from, counted);
    const owners = new Set(q.addresses);
    const mint = this.deps.mint(q.currency);
    const transfers = movements.filter((m) => m.deltaMinor > 0n && m.mint === mint && owners.has(m.owner)).map((m) => ({
      ...this.transferOf(m, movements), to: m.owner, confirmations: Number(latest - m.slot + 1n),
    }));
    return { transfers, nextPosition: (lastSlot + 1n).toString(), caughtUp: lastSlot >= counted };
  }

  async readTokenTransfers(fromPosition: string): Promise<TokenTransferPage> {
    const { latest, counted } = await this.node.tips();
    const from = BigInt(fromPosition);
    const mints = this.mints();
    if (latest < from || mints.size === 0) return { transfers: [], nextPosition: fromPosition, caughtUp: true };
    const { movements, lastSlot } = await this.node.tokenMovements(from, latest);
    const transfers = movements.filter((m) => m.deltaMinor > 0n && mints.has(m.mint)).map((m) => ({
      ...this.transferOf(m, movements), currency: mints.get(m.mint)!, to: m.owner, position: m.slot.toString(),
      confirmations: Number(latest - m.slot + 1n), final: m.slot <= counted,
    }));
    return { transfers, nextPosition: (lastSlot + 1n).toString(), caughtUp: lastSlot >= latest };
  }

  /** One credit of a token account: its id, and who sent it (the owner debited of the same mint in that transaction). */
  private transferOf(credit: TokenMovement, all: TokenMovement[]) {
    const from = all.find((m) => m.signature === credit.signature && m.mint === credit.mint && m.deltaMinor < 0n)?.owner ?? '';
    return { id: `${credit.signature}:${credit.owner}`, txHash: credit.signature, from, amountMinor: credit.deltaMinor };
  }

  async movementsOf(txHash: string): Promise<ChainMovement[] | null> {
    const changes = await this.node.transactionMovements(txHash);
    if (!changes) return null;
    const mints = this.mints();
    // What was paid: each token account credited, as its owner receiving the mint's currency.
    return changes.filter((c) => c.deltaMinor > 0n && mints.has(c.mint))
      .map((c) => ({ to: c.owner, currency: mints.get(c.mint)!, amountMinor: c.deltaMinor, index: c.accountIndex }));
  }

  async transferDepth(t: { txHash: string; position: string }): Promise<{ confirmations: number; final: boolean } | null> {
    const status = await this.node.signatureStatus(t.txHash);
    if (!status || status.slot.toString() !== t.position || status.err) return null;
    const { latest, counted } = await this.node.tips();
    return { confirmations: Number(latest - status.slot + 1n), final: status.slot <= counted };
  }

  async balancesOf(owner: string, assets: string[]): Promise<AssetBalance[]> {
    return Promise.all(assets.map(async (asset) => {
      const read = async (commitment: 'confirmed' | 'finalized') => {
        if (asset === this.nativeAsset) return (await this.node.rpc.getBalance(address(owner), { commitment }).send()).value;
        const account = await this.node.tokenAccount(await this.node.associatedTokenAccount(address(owner), this.deps.mint(asset)), commitment);
        return account && account !== 'invalid' ? account.amount : 0n;
      };
      const [confirmedMinor, latestMinor] = await Promise.all([read(this.deps.commitment), read('confirmed')]);
      return { asset, confirmedMinor, latestMinor };
    }));
  }

  async treasuryHoldings(q: { currency: string; txHashes: string[] }): Promise<TreasuryHoldings> {
    const account = await this.node.associatedTokenAccount(this.deps.keys.treasury.address, this.deps.mint(q.currency));
    const { slot, amount } = await this.node.tokenAmountAt(account, this.deps.commitment);
    const landed: string[] = [];
    if (q.txHashes.length > 0) {
      const statuses = (await this.node.rpc.getSignatureStatuses(q.txHashes as never[], { searchTransactionHistory: true }).send()).value;
      statuses.forEach((st, i) => {
        if (st && st.err === null && st.slot <= slot) landed.push(q.txHashes[i]!);
      });
    }
    return { position: slot.toString(), minor: amount, landed };
  }

  /** The signature fee, and the rent of the receiver's token account should it have to be created. */
  async estimatePayoutFee(): Promise<bigint> {
    return SIGNATURE_FEE + (await this.node.rpc.getMinimumBalanceForRentExemption(TOKEN_ACCOUNT_SIZE).send());
  }

  async sendPayout(r: PayoutRequest): Promise<{ txHash: string }> {
    return this.sends.send(r.idempotencyKey, async () => {
      await this.checkReceiver(r.currency, r.to);
      return signTokenTransfer(this.node, {
        feePayer: await this.deps.keys.treasury.signer(), authority: await this.deps.keys.treasury.signer(),
        mint: this.deps.mint(r.currency), decimals: ASSET_SCALE[r.currency]!, to: address(r.to), amountMinor: r.amountMinor, memo: r.idempotencyKey,
      });
    });
  }

  /** Checked again right before the first signature (the review's answer may be minutes old); never for a transaction already out. */
  private async checkReceiver(currency: string, to: string) {
    const refusal = await this.receiverRefusal(currency, to);
    if (refusal) throw new PayoutRejectedError(refusal);
  }

  payoutStatus(idempotencyKey: string): Promise<PayoutStatus> {
    return this.sends.status(idempotencyKey, (s) => this.feeOf(s));
  }

  /** What a transaction cost the treasury: its fee, and the rent of any token account it created. */
  private async feeOf(signature: string): Promise<bigint> {
    const tx = await this.node.rpc.getTransaction(signature as never, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }).send();
    if (!tx?.meta) return SIGNATURE_FEE;
    const before = new Set((tx.meta.preTokenBalances ?? []).map((b) => b.accountIndex));
    const created = (tx.meta.postTokenBalances ?? []).filter((b) => !before.has(b.accountIndex)).length;
    const rent = created === 0 ? 0n : (await this.node.rpc.getMinimumBalanceForRentExemption(TOKEN_ACCOUNT_SIZE).send()) * BigInt(created);
    return BigInt(tx.meta.fee) + rent;
  }

  async sendFromWallet(r: WalletSendRequest): Promise<{ txHash: string }> {
    return walletSendOnce(this.node, this.deps.db, { key: r.idempotencyKey, walletId: r.walletId, transferId: r.transferId }, async () => {
      await this.checkReceiver(r.currency, r.to);
      const mint = this.deps.mint(r.currency);
      const held = await this.node.tokenAccount(await this.node.associatedTokenAccount(address(r.from), mint));
      if (!held || held === 'invalid' || held.amount < r.amountMinor) throw new PayoutRejectedError(`the wallet holds less than ${r.amountMinor} of ${r.currency} on solana`);
      const key = await r.openKey();
      try {
        const owner = await createKeyPairSignerFromPrivateKeyBytes(walletSolanaSeed(key));
        if (owner.address !== r.from) throw new Error(`wallet ${r.walletId}: its key does not open to its solana address`);
        return await signTokenTransfer(this.node, {
          feePayer: await this.deps.keys.treasury.signer(), authority: owner, mint, decimals: ASSET_SCALE[r.currency]!, to: address(r.to), amountMinor: r.amountMinor,
          memo: r.idempotencyKey,
        });
      } finally {
        key.fill(0);
      }
    });
  }

  prepareWalletTransaction(): Promise<PreparedWalletTransaction> {
    return Promise.reject(new ChainUnavailableError('MPC wallets hold secp256k1 keys, for EVM chains only'));
  }

  sweepDeposit(q: SweepRequest): Promise<SweepStatus> {
    const owner = this.deps.keys.deposit(q.depositIndex);
    return sweepOnce(this.node, this.deps.db, { ...q, from: owner.address }, async () => signTokenTransfer(this.node, {
      feePayer: await this.deps.keys.treasury.signer(), authority: await owner.signer(), mint: this.deps.mint(q.currency), decimals: ASSET_SCALE[q.currency]!,
      to: this.deps.keys.treasury.address, amountMinor: q.amountMinor, closeSourceTo: this.deps.keys.treasury.address, memo: q.sweepKey,
    }));
  }

  /** The sandbox's deposit: the issuer mints the tokens into the address's token account (and airdrops SOL with `gasMoney`). */
  async sandboxDeposit(q: { currency: string; address: string; amountMinor: bigint; gasMoney?: boolean }): Promise<{ txHash: string }> {
    const mint = this.deps.mint(q.currency);
    const issuer = await this.deps.keys.issuer.signer();
    const owner = address(q.address);
    if (q.gasMoney) await this.node.airdrop(owner, 1_000_000_000n);
    const token = await this.node.associatedTokenAccount(owner, mint);
    const signed = await signInstructions(this.node, await this.deps.keys.treasury.signer(), [
      await getCreateAssociatedTokenIdempotentInstructionAsync({ payer: await this.deps.keys.treasury.signer(), owner, mint }),
      getMintToCheckedInstruction({ mint, token, mintAuthority: issuer, amount: q.amountMinor, decimals: ASSET_SCALE[q.currency]! }),
      // Two deposits of one amount to one address are two transactions, not one signature.
      memoInstruction(`sandbox deposit ${randomBase62(16)}`),
    ]);
    await this.node.broadcast(signed.wire);
    return { txHash: signed.signature };
  }
}
