import { getContractAddress, type Hex } from 'viem';
import { HDKey, hdKeyToAccount, type HDAccount } from 'viem/accounts';
import { mnemonicToSeedSync } from '@scure/bip39';
import { RAILS, type EvmChain } from '../../domain/rails';

/** Our deposit addresses start at this HD index; lower indexes are the platform's own keys. */
const DEPOSIT_INDEX_BASE = 1000;

/** The platform's keys on every EVM chain, from one mnemonic: m/44'/60'/0'/0/{index}. */
export class ChainKeys {
  private readonly root: HDKey;
  private readonly cache = new Map<number, HDAccount>();

  constructor(mnemonic: string) {
    this.root = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic.trim()));
  }

  account(index: number): HDAccount {
    let a = this.cache.get(index);
    if (!a) this.cache.set(index, (a = hdKeyToAccount(this.root, { addressIndex: index })));
    return a;
  }

  /** Holds the float that payouts are paid from, and pays their gas. */
  get treasury() {
    return this.account(0);
  }

  /** Deploys the sandbox stablecoins and mints them (owner of the contracts). */
  get issuer() {
    return this.account(1);
  }

  /** The key of a transfer's deposit address (the transfer keeps its index). */
  depositAccount(depositIndex: number): HDAccount {
    return this.account(DEPOSIT_INDEX_BASE + depositIndex);
  }
}

/** Where the i-th listed stablecoin of a chain lives: deployed by the issuer with nonce i. */
export function sandboxTokenAddress(keys: ChainKeys, chain: EvmChain, currency: string): Hex {
  const index = RAILS[chain].currencies.indexOf(currency);
  if (index < 0) throw new Error(`${chain} carries no ${currency}`);
  return getContractAddress({ from: keys.issuer.address, nonce: BigInt(index) });
}
