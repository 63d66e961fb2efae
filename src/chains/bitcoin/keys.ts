import { hkdfSync } from 'node:crypto';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { secp256k1 } from '@noble/curves/secp256k1';
import { NETWORK, p2wpkh, TEST_NETWORK } from '@scure/btc-signer';

export type BitcoinNetworkName = 'mainnet' | 'testnet' | 'regtest';
export type BitcoinNetwork = typeof NETWORK;

/** Address encodings per network: regtest is testnet's but for its bech32 prefix. */
export const BITCOIN_NETWORKS: Record<BitcoinNetworkName, BitcoinNetwork> = {
  mainnet: NETWORK,
  testnet: TEST_NETWORK,
  regtest: { ...TEST_NETWORK, bech32: 'bcrt' },
};

/** Our deposit addresses start at this index; lower indexes are the platform's own keys. */
const DEPOSIT_INDEX_BASE = 1000;

/** One of the platform's keys on Bitcoin: its P2WPKH address at once, its private key when something is signed. */
export interface BitcoinKey {
  index: number;
  address: string;
  publicKey: Uint8Array;
  privateKey: () => Uint8Array;
}

/**
 * The platform's secp256k1 keys on Bitcoin, from the same mnemonic as its other chains' keys:
 * m/84'/{coin}'/0'/0/{index} (BIP-84, native segwit), coin 0 on mainnet and 1 on the test networks.
 */
export class BitcoinKeys {
  private readonly account: HDKey;
  private readonly cache = new Map<number, BitcoinKey>();

  constructor(mnemonic: string, readonly network: BitcoinNetworkName) {
    const coin = network === 'mainnet' ? 0 : 1;
    this.account = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic.trim())).derive(`m/84'/${coin}'/0'/0`);
  }

  key(index: number): BitcoinKey {
    let k = this.cache.get(index);
    if (!k) {
      const derived = this.account.deriveChild(index);
      const publicKey = derived.publicKey!;
      k = { index, address: p2wpkh(publicKey, BITCOIN_NETWORKS[this.network]).address!, publicKey, privateKey: () => derived.privateKey! };
      this.cache.set(index, k);
    }
    return k;
  }

  /** Holds the float that payouts and refunds are paid from, and receives their change. */
  get treasury(): BitcoinKey {
    return this.key(0);
  }

  /** The sandbox node's miner: its block rewards pay the sandbox's deposits (never on a real network). */
  get faucet(): BitcoinKey {
    return this.key(1);
  }

  /** The key index of a transfer's deposit address (the transfer keeps its deposit index). */
  depositKeyIndex(depositIndex: number): number {
    return DEPOSIT_INDEX_BASE + depositIndex;
  }

  deposit(depositIndex: number): BitcoinKey {
    return this.key(this.depositKeyIndex(depositIndex));
  }
}

/**
 * A custodial wallet's Bitcoin key: a secp256k1 key derived from the wallet's one sealed key (HKDF,
 * under a label of Bitcoin's own), so the wallet's EVM and Bitcoin keys are not the same bytes.
 */
export function walletBitcoinKey(walletKey: Uint8Array): Uint8Array {
  for (let counter = 0; ; counter++) {
    const candidate = new Uint8Array(hkdfSync('sha256', walletKey, Buffer.from([counter]), 'financial-platform bitcoin wallet key', 32));
    // A value outside the curve's order (odds about 2^-128) is skipped: the next counter gives another.
    if (secp256k1.utils.isValidPrivateKey(candidate)) return candidate;
  }
}

/** The P2WPKH address of a custodial wallet's Bitcoin key on `network`. */
export function walletBitcoinAddress(walletKey: Uint8Array, network: BitcoinNetworkName): string {
  return p2wpkh(secp256k1.getPublicKey(walletBitcoinKey(walletKey), true), BITCOIN_NETWORKS[network]).address!;
}
