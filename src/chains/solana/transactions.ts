import {
  address, addSignersToTransactionMessage, appendTransactionMessageInstructions, createTransactionMessage, decompileTransactionMessage, getBase64Encoder,
  getBase64EncodedWireTransaction, getCompiledTransactionMessageDecoder, getSignatureFromTransaction, getTransactionDecoder, pipe,
  setTransactionMessageFeePayerSigner, setTransactionMessageLifetimeUsingBlockhash, signTransactionMessageWithSigners,
  type Address, type Instruction, type KeyPairSigner,
} from '@solana/kit';
import {
  getCloseAccountInstruction, getCreateAssociatedTokenIdempotentInstructionAsync, getTransferCheckedInstruction,
} from '@solana-program/token';
import { getAddMemoInstruction } from '@solana-program/memo';
import type { SolanaNode } from './node';

/**
 * SPL Memo (v3), deployed on every cluster: the memo program @solana-program/memo names by default is
 * a newer one that LiteSVM and older clusters do not hold.
 */
export const SPL_MEMO_PROGRAM = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

/** A memo instruction naming what a transaction pays (no signer: it only logs its text). */
export const memoInstruction = (memo: string): Instruction => getAddMemoInstruction({ memo }, { programAddress: SPL_MEMO_PROGRAM });

/** A transaction signed and ready to send: its wire bytes (base64) and its signature (its id on the chain). */
export interface SignedSolanaTransaction {
  wire: string;
  signature: string;
}

/**
 * A token transfer between two owners' associated token accounts, its fee paid by `feePayer`:
 * the receiver's account is created first when it does not exist (its rent paid by the fee payer),
 * and with `closeSourceTo` the emptied source account is closed, its rent going there (a sweep).
 * `memo` names the payment it makes (its idempotency key): two payments of the same amount to the same
 * owner on the same blockhash would otherwise be byte-identical, one transaction with one signature.
 */
export async function signTokenTransfer(node: SolanaNode, q: {
  feePayer: KeyPairSigner; authority: KeyPairSigner; mint: Address; decimals: number; to: Address; amountMinor: bigint; closeSourceTo?: Address; memo: string;
}): Promise<SignedSolanaTransaction> {
  const [source, destination] = await Promise.all([node.associatedTokenAccount(q.authority.address, q.mint), node.associatedTokenAccount(q.to, q.mint)]);
  const instructions: Instruction[] = [
    await getCreateAssociatedTokenIdempotentInstructionAsync({ payer: q.feePayer, owner: q.to, mint: q.mint }),
    getTransferCheckedInstruction({ source, mint: q.mint, destination, authority: q.authority, amount: q.amountMinor, decimals: q.decimals }),
  ];
  if (q.closeSourceTo) instructions.push(getCloseAccountInstruction({ account: source, destination: q.closeSourceTo, owner: q.authority }));
  instructions.push(memoInstruction(q.memo));
  return signInstructions(node, q.feePayer, instructions);
}

/** Instructions in one transaction on the newest blockhash, signed by every signer they name. */
export async function signInstructions(node: SolanaNode, feePayer: KeyPairSigner, instructions: Instruction[]): Promise<SignedSolanaTransaction> {
  const { value: lifetime } = await node.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  const tx = await signTransactionMessageWithSigners(message);
  return { wire: getBase64EncodedWireTransaction(tx), signature: getSignatureFromTransaction(tx) };
}

/**
 * The same instructions as a stored transaction, on the newest blockhash, signed again by `signers`
 * (every key it needs): what replaces a transaction whose blockhash expired before it landed.
 */
export async function resignWithFreshBlockhash(node: SolanaNode, wire: string, signers: KeyPairSigner[]): Promise<SignedSolanaTransaction> {
  const stored = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
  const message = decompileTransactionMessage(getCompiledTransactionMessageDecoder().decode(stored.messageBytes));
  const { value: lifetime } = await node.rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const tx = await signTransactionMessageWithSigners(addSignersToTransactionMessage(signers, setTransactionMessageLifetimeUsingBlockhash(lifetime, message)));
  return { wire: getBase64EncodedWireTransaction(tx), signature: getSignatureFromTransaction(tx) };
}
