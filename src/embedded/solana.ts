import fs from 'node:fs';
import path from 'node:path';
import { createSolanaRpc, type KeyPairSigner } from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  getCreateAssociatedTokenIdempotentInstructionAsync, getInitializeMint2Instruction, getMintSize, getMintToCheckedInstruction, TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { SolanaKeys } from '../chains/solana/keys';
import { SolanaNode } from '../chains/solana/node';
import { signInstructions } from '../chains/solana/transactions';
import { ASSET_SCALE } from '../domain/money';
import { RAILS } from '../domain/rails';
import { startServiceProcess, waitUntilAnswering } from './service-process';

/** Float minted to the treasury on a fresh sandbox node, per stablecoin (whole units), and its SOL for fees and rent. */
const TREASURY_FLOAT = 1_000_000_000n;
const TREASURY_SOL = 100_000n * 1_000_000_000n;

/**
 * The sandbox's Solana node (src/main/solana-node.ts) as a process beside ours, with the sandbox's
 * USDC and USDT mints and the treasury's float and SOL. With a state directory the chain survives
 * restarts.
 */
export async function startSolanaNode(opts: { port: number; mnemonic: string; stateDir?: string; slotMs?: number; blockhashValiditySlots?: number }) {
  let pidFile: string | undefined;
  const env: NodeJS.ProcessEnv = {
    ...process.env, SOLANA_NODE_PORT: String(opts.port), SOLANA_SLOT_MS: String(opts.slotMs ?? 400), SOLANA_BLOCKHASH_VALIDITY_SLOTS: String(opts.blockhashValiditySlots ?? 150),
  };
  if (opts.stateDir) {
    fs.mkdirSync(opts.stateDir, { recursive: true });
    env.SOLANA_NODE_STATE = path.join(opts.stateDir, 'solana.bin');
    pidFile = path.join(opts.stateDir, 'solana.pid');
  }
  const node = await startServiceProcess({
    command: process.execPath, args: ['--import', 'tsx', path.join(__dirname, '../main/solana-node.ts')], env, pidFile,
    ports: pidFile ? [{ port: opts.port, what: 'The sandbox Solana node', setting: 'SOLANA_NODE_PORT' }] : [],
  });
  const url = `http://127.0.0.1:${opts.port}`;
  try {
    const rpc = createSolanaRpc(url);
    await waitUntilAnswering(node, `the Solana node at ${url}`, () => rpc.getHealth().send());
    await prepareSandboxSolana(url, new SolanaKeys(opts.mnemonic));
  } catch (err) {
    await node.stop();
    throw err;
  }
  return { url, stop: () => node.stop() };
}

/** SOL for the treasury (it pays every fee and rent), the sandbox mints, and the treasury's float; nothing on a node that has them. */
export async function prepareSandboxSolana(url: string, keys: SolanaKeys) {
  const node = new SolanaNode(url, 'confirmed');
  const treasury = await keys.treasury.signer();
  if ((await node.rpc.getBalance(treasury.address).send()).value === 0n) await node.airdrop(treasury.address, TREASURY_SOL);
  const issuer = await keys.issuer.signer();
  const mintSpace = BigInt(getMintSize());
  const rent = await node.rpc.getMinimumBalanceForRentExemption(mintSpace).send();
  for (const currency of RAILS.solana.currencies) {
    const mint: KeyPairSigner = await keys.sandboxMint(currency)!.signer();
    if (await node.ownerProgram(mint.address)) continue;
    const decimals = ASSET_SCALE[currency]!;
    const token = await node.associatedTokenAccount(treasury.address, mint.address);
    const signed = await signInstructions(node, treasury, [
      getCreateAccountInstruction({ payer: treasury, newAccount: mint, lamports: rent, space: mintSpace, programAddress: TOKEN_PROGRAM_ADDRESS }),
      getInitializeMint2Instruction({ mint: mint.address, decimals, mintAuthority: issuer.address, freezeAuthority: issuer.address }),
      await getCreateAssociatedTokenIdempotentInstructionAsync({ payer: treasury, owner: treasury.address, mint: mint.address }),
      getMintToCheckedInstruction({ mint: mint.address, token, mintAuthority: issuer, amount: TREASURY_FLOAT * 10n ** BigInt(decimals), decimals }),
    ]);
    await node.broadcast(signed.wire);
  }
}
