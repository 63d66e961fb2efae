import { secp256k1 } from '@noble/curves/secp256k1';
import { p2wpkh } from '@scure/btc-signer';
import { BitcoinKeys, BITCOIN_NETWORKS } from '../../src/chains/bitcoin/keys';
import { BitcoinRpc } from '../../src/chains/bitcoin/rpc';
import { stack } from '.';
import { TEST_MNEMONIC } from './stack';

// The test stack's btcd (regtest) has no block clock: a test mines the blocks it needs, so it decides
// when a payment is in a block and when one is left out (a payout to be replaced, a reorganisation).

export const bitcoinKeys = new BitcoinKeys(TEST_MNEMONIC, 'regtest');

export function bitcoinRpc(): BitcoinRpc {
  return new BitcoinRpc(stack().processEnv.BITCOIN_RPC_URL!);
}

/** Mines `n` blocks (to the sandbox faucet); answers their hashes. */
export function mineBlocks(n: number): Promise<string[]> {
  return bitcoinRpc().call<string[]>('generate', [n]);
}

/** Mines a block every `everyMs` while `work` runs; answers what it answers. */
export async function whileMining<T>(work: Promise<T>, everyMs = 300): Promise<T> {
  let done = false;
  const miner = (async () => {
    while (!done) {
      await mineBlocks(1);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  try {
    return await work;
  } finally {
    done = true;
    await miner;
  }
}

/** A fresh regtest P2WPKH address nobody on the platform holds (a customer's own wallet, elsewhere). */
export function outsideAddress(): string {
  return p2wpkh(secp256k1.getPublicKey(secp256k1.utils.randomPrivateKey(), true), BITCOIN_NETWORKS.regtest).address!;
}
