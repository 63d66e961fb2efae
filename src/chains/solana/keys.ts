import { hkdfSync } from 'node:crypto';
import { mnemonicToSeedSync } from '@scure/bip39';
import { ed25519 } from '@noble/curves/ed25519';
import { HDKey } from 'micro-key-producer/slip10.js';
import { createKeyPairSignerFromPrivateKeyBytes, getAddressDecoder, type Address, type KeyPairSigner } from '@solana/kit';

/** Our deposit addresses start at this index; lower indexes are the platform's own keys. */
const DEPOSIT_INDEX_BASE = 1000;
/** The sandbox's own stablecoin mints, at these indexes (only on a local node: the real mints are configured). */
const SANDBOX_MINT_INDEX: Record<string, number> = { usdc: 2, usdt: 3 };

/** One key of the platform's on Solana: its address at once, its signer when something is signed. */
export interface SolanaKey {
  address: Address;
  signer: () => Promise<KeyPairSigner>;
}

/**
 * The platform's ed25519 keys on Solana, from the same mnemonic as its EVM keys: m/44'/501'/{index}'/0'
 * (SLIP-0010, as Solana wallets derive them).
 */
export class SolanaKeys {
  private readonly root: HDKey;
  private readonly cache = new Map<number, SolanaKey>();

  constructor(mnemonic: string) {
    this.root = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic.trim()));
  }

  key(index: number): SolanaKey {
    let k = this.cache.get(index);
    if (!k) {
      const derived = this.root.derive(`m/44'/501'/${index}'/0'`);
      const privateKey = derived.privateKey;
      let signer: Promise<KeyPairSigner> | undefined;
      k = { address: getAddressDecoder().decode(derived.publicKeyRaw), signer: () => (signer ??= createKeyPairSignerFromPrivateKeyBytes(privateKey)) };
      this.cache.set(index, k);
    }
    return k;
  }

  /** Holds the float that payouts are paid from, and pays every transaction's fee (the fee payer). */
  get treasury(): SolanaKey {
    return this.key(0);
  }

  /** Mints the sandbox stablecoins (their mint and freeze authority). */
  get issuer(): SolanaKey {
    return this.key(1);
  }

  /** The mint account of a sandbox stablecoin. */
  sandboxMint(currency: string): SolanaKey | undefined {
    const index = SANDBOX_MINT_INDEX[currency];
    return index === undefined ? undefined : this.key(index);
  }

  /** The owner of a transfer's deposit address (the transfer keeps its index). */
  deposit(depositIndex: number): SolanaKey {
    return this.key(DEPOSIT_INDEX_BASE + depositIndex);
  }
}

/**
 * A custodial wallet's Solana key: an ed25519 seed derived from the wallet's one sealed key (HKDF,
 * under a label of Solana's own), so the wallet's EVM and Solana keys are not the same bytes.
 */
export function walletSolanaSeed(walletKey: Uint8Array): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', walletKey, Buffer.alloc(0), 'financial-platform solana wallet key', 32));
}

/** The address of a custodial wallet's Solana key. */
export function walletSolanaAddress(walletKey: Uint8Array): Address {
  return getAddressDecoder().decode(ed25519.getPublicKey(walletSolanaSeed(walletKey)));
}
