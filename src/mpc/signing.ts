import type { Hex } from 'viem';
import type { ChainAdapters } from '../chains';
import { releaseNonce } from '../chains/evm/account-signer';
import type { Db } from '../db';
import { tenantOf } from '../db/tenant-scope';
import type { ChainRail } from '../domain/rails';
import { walletDepositRequest } from '../transfers/wallet-legs';
import { failMpcWallet } from '../wallets/mpc-wallet';
import { endMpcSession, insertMpcSession } from './sessions';

// Signing requests of MPC wallets (docs/MPC.md): a transfer from an MPC wallet prepares its
// transaction (checked on the chain, nonce taken) and opens a signing session with it; the customer's
// signer co-signs it with the platform; the signed bytes are stored, then broadcast by the transfer.

/**
 * The signing session of a transfer's wallet deposit: created once with the unsigned transaction
 * (a repeat finds it). PayoutRejectedError when the chain would refuse the transaction now.
 */
export async function openTransferSigning(deps: { db: Db; chains: ChainAdapters }, transferId: string, expiresInMs: number): Promise<{ sessionId: string }> {
  const existing = await deps.db.selectFrom('mpc_sessions').select('id').where('transfer_id', '=', transferId).where('kind', '=', 'signing')
    .orderBy('id', 'desc').executeTakeFirst();
  if (existing) return { sessionId: existing.id };
  const t = await deps.db.selectFrom('transfers').selectAll().where('id', '=', transferId).executeTakeFirstOrThrow();
  const wallet = await deps.db.selectFrom('wallets').select(['id', 'addresses']).where('id', '=', t.source_wallet_id!).executeTakeFirstOrThrow();
  const rail = t.source_rail as ChainRail;
  let sessionId = '';
  await deps.chains[rail].prepareWalletTransaction(walletDepositRequest(t, wallet), async (trx, tx) => {
    const session = await insertMpcSession(trx, tenantOf(t), {
      walletId: wallet.id, kind: 'signing', transferId: t.id, chain: rail, expiresAt: new Date(Date.now() + expiresInMs), signingHash: tx.hash,
      transaction: { serialized: tx.serialized, chain_id: tx.chainId, nonce: tx.nonce, token: tx.token, currency: t.source_currency, to: t.deposit_address!, amount_minor: t.amount_minor },
    });
    sessionId = session.id;
  });
  return { sessionId };
}

/**
 * Why a signing session's transaction can never be mined, if so: its nonce was used, deep enough, by
 * a transaction of the wallet the platform never signed (a recovery by the customer's two shares).
 * Undefined while the session still waits for the customer, or on a chain without account nonces.
 */
export async function spentSigningNonce(deps: { db: Db; chains: ChainAdapters }, sessionId: string): Promise<string | undefined> {
  const session = await deps.db.selectFrom('mpc_sessions').select(['status', 'chain', 'transaction', 'wallet_id']).where('id', '=', sessionId).executeTakeFirstOrThrow();
  if (session.status !== 'awaiting_customer' || !session.transaction || !session.chain) return undefined;
  const wallet = await deps.db.selectFrom('wallets').select('addresses').where('id', '=', session.wallet_id).executeTakeFirstOrThrow();
  const address = wallet.addresses[session.chain];
  const adapter = deps.chains[session.chain as ChainRail];
  if (!address || !adapter?.walletNonceUsedElsewhere) return undefined;
  const { nonce } = session.transaction;
  if (!(await adapter.walletNonceUsedElsewhere(address, nonce))) return undefined;
  return `nonce ${nonce} of the wallet's ${session.chain} address was used by a transaction the platform did not co-sign (a recovery?): this one can never be mined`;
}

/**
 * Ends a session the customer did not finish: a key generation fails its wallet; a signing hands its
 * nonce back when no later transaction took the next one. False if the session had ended already.
 */
export async function closeUnfinishedSession(db: Db, sessionId: string, status: 'failed' | 'expired' | 'canceled', reason: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const session = await trx.selectFrom('mpc_sessions').selectAll().where('id', '=', sessionId).forUpdate().executeTakeFirstOrThrow();
    if (!(await endMpcSession(trx, sessionId, status, reason))) return false;
    if (session.kind === 'key_generation') await failMpcWallet(trx, session.wallet_id);
    else if (session.transaction) {
      const wallet = await trx.selectFrom('wallets').select('addresses').where('id', '=', session.wallet_id).executeTakeFirstOrThrow();
      await releaseNonce(trx, session.chain!, wallet.addresses[session.chain!] as Hex, session.transaction.nonce);
    }
    await trx.updateTable('mpc_platform_rounds').set({ state_sealed: null }).where('session_id', '=', sessionId).execute();
    return true;
  });
}
