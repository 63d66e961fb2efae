import { sha256 } from '@noble/hashes/sha2';
import { hex } from '@scure/base';
import { Address, CompactSize, OutScript, p2pkh, p2wpkh, RawTx, Script } from '@scure/btc-signer';
import * as P from 'micro-packed';
import type { BitcoinNetwork } from './keys';

/** A block as Bitcoin serializes it: the 80-byte header, then its transactions (btc-signer's coder). */
const RawBlock = P.struct({ header: P.bytes(80), txs: P.array(CompactSize, RawTx) });

export interface BlockInput {
  /** The output it spends (the coinbase spends none). */
  txid: string;
  vout: number;
  /** The spender's address where the input shows it (a P2WPKH witness, a P2PKH script). */
  from: string | null;
}

export interface BlockOutput {
  vout: number;
  /** Null for a script that is no address (OP_RETURN, bare multisig…). */
  address: string | null;
  amountSats: bigint;
}

export interface BlockTransaction {
  txid: string;
  coinbase: boolean;
  inputs: BlockInput[];
  outputs: BlockOutput[];
}

/** Hashes as Bitcoin shows them: double SHA-256, bytes reversed. */
export function displayHash(bytes: Uint8Array): string {
  return hex.encode(sha256(sha256(bytes)).reverse());
}

/** The transactions of a raw block (getblock with verbosity 0), their ids and addresses decoded. */
export function decodeBlock(rawHex: string, network: BitcoinNetwork): { prevHash: string; transactions: BlockTransaction[] } {
  const block = RawBlock.decode(hex.decode(rawHex));
  const addressOf = Address(network);
  const transactions = block.txs.map((tx, i): BlockTransaction => ({
    // The id leaves the witnesses out (BIP-141).
    txid: displayHash(RawTx.encode({ ...tx, segwitFlag: false, witnesses: undefined })),
    coinbase: i === 0,
    inputs: i === 0 ? [] : tx.inputs.map((input, n) => ({
      txid: hex.encode(input.txid), vout: input.index, from: spenderOf(input.finalScriptSig, tx.witnesses?.[n], network),
    })),
    outputs: tx.outputs.map((output, vout) => ({ vout, address: outputAddress(addressOf, output.script), amountSats: output.amount })),
  }));
  return { prevHash: hex.encode(Uint8Array.from(block.header.subarray(4, 36)).reverse()), transactions };
}

function outputAddress(addressOf: ReturnType<typeof Address>, script: Uint8Array): string | null {
  try {
    return addressOf.encode(OutScript.decode(script));
  } catch {
    return null;
  }
}

/** A single-key spender's address: P2WPKH's witness or P2PKH's script ends with its public key. */
function spenderOf(scriptSig: Uint8Array, witness: Uint8Array[] | undefined, network: BitcoinNetwork): string | null {
  try {
    if (witness?.length === 2 && witness[1]!.length === 33) return p2wpkh(witness[1]!, network).address!;
    const parts = scriptSig.length > 0 ? Script.decode(scriptSig) : [];
    const last = parts[1];
    if (parts.length === 2 && last instanceof Uint8Array && last.length === 33) return p2pkh(last, network).address!;
  } catch {
    // Not a single-key spend: no address to name.
  }
  return null;
}
