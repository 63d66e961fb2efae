import type { Transaction } from 'kysely';
import type { z } from 'zod';
import { findCustodyCustomer } from '../customers/customer';
import type { Database, WalletRow } from '../db/schema';
import { tenantOf, type Tenant } from '../db/tenant-scope';
import { recordEvent } from '../domain/events';
import { isEvmChain } from '../domain/rails';
import { invalidField } from '../errors';
import { newId } from '../ids';
import { insertMpcSession } from '../mpc/sessions';
import { walletAddressKey } from './address-key';
import { serializeWallet, type ServedChain, type WalletCreate } from './wallet';

// MPC wallets (docs/MPC.md): created in `key_generation` with a key-generation session the customer's
// signer runs with the platform; active, with one address on every chain, once both sides hold their
// shares of the key and found the same address.

export const MPC_CONFIG = { threshold: 2, total_shares: 3, key_type: 'ecdsa' } as const;

/** `mpc_config` as the spec allows it: 2-of-3 ECDSA (the default when absent); a 400 names the field otherwise. */
export function checkMpcConfig(body: z.output<typeof WalletCreate>) {
  if (body.type !== 'mpc') {
    if (body.mpc_config) throw invalidField('body', 'mpc_config', 'is for mpc wallets only');
    return;
  }
  for (const field of ['threshold', 'total_shares'] as const) {
    if (body.mpc_config && body.mpc_config[field] !== MPC_CONFIG[field]) {
      throw invalidField('body', `mpc_config.${field}`, `must be ${MPC_CONFIG[field]}: MPC wallets are 2-of-3 threshold ECDSA`);
    }
  }
  body.chains.forEach((chain, i) => {
    if (!isEvmChain(chain.toLowerCase() as never)) {
      throw invalidField('body', `chains[${i}]`, `MPC wallets hold secp256k1 ECDSA keys, for EVM chains only; ${chain} is not one`);
    }
  });
}

/** The wallet without a key yet, and its key-generation session (which expires after `expiresInMs`). */
export async function createMpcWallet(
  trx: Transaction<Database>, tenant: Tenant, body: z.output<typeof WalletCreate>, chains: ServedChain[], expiresInMs: number,
): Promise<{ wallet: WalletRow; sessionId: string }> {
  const customer = await findCustodyCustomer(trx, tenant, body.customer_id, 'MPC wallets', 'can_use_mpc');
  const now = new Date();
  const id = newId('wallet', now.getTime());
  const wallet = await trx.insertInto('wallets').values({
    id, developer_id: tenant.developerId, environment: tenant.environment, customer_id: customer.id, type: 'mpc', label: body.label ?? null,
    chains: JSON.stringify(chains.map((c) => c.chain)), addresses: '{}', key_sealed: null, kek_id: null, status: 'key_generation',
    mpc_config: JSON.stringify(MPC_CONFIG), created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  // The chain's watcher reads from before the wallet existed.
  await trx.insertInto('chain_watch_cursors').values(chains.map(({ chain, position }) => ({ chain, position, updated_at: now })))
    .onConflict((oc) => oc.column('chain').doNothing()).execute();
  const session = await insertMpcSession(trx, tenant, { walletId: id, kind: 'key_generation', expiresAt: new Date(now.getTime() + expiresInMs) });
  await recordEvent(trx, tenant, { type: 'wallet.created', objectId: id, data: serializeWallet(wallet) }, now);
  return { wallet, sessionId: session.id };
}

/** The key generation ended with one address on both sides: the wallet holds the platform's sealed share and is active. */
export async function activateMpcWallet(trx: Transaction<Database>, walletId: string, key: { address: string; keySealed: string; kekId: string }) {
  const row = await trx.selectFrom('wallets').selectAll().where('id', '=', walletId).forUpdate().executeTakeFirstOrThrow();
  if (row.status !== 'key_generation') return;
  const addresses = Object.fromEntries(row.chains.map((chain) => [chain, key.address]));
  const now = new Date();
  const wallet = await trx.updateTable('wallets').set({
    key_sealed: key.keySealed, kek_id: key.kekId, addresses: JSON.stringify(addresses), status: 'active', updated_at: now,
  }).where('id', '=', walletId).returningAll().executeTakeFirstOrThrow();
  await trx.insertInto('wallet_addresses').values(row.chains.map((chain) => ({ chain, address: walletAddressKey(chain, key.address), wallet_id: walletId }))).execute();
  await recordEvent(trx, tenantOf(row), { type: 'wallet.updated', objectId: walletId, data: serializeWallet(wallet) }, now);
}

/** The key generation ended without a key (expired, or the parties disagreed): the wallet is failed for good. */
export async function failMpcWallet(trx: Transaction<Database>, walletId: string) {
  const now = new Date();
  const wallet = await trx.updateTable('wallets').set({ status: 'failed', updated_at: now })
    .where('id', '=', walletId).where('status', '=', 'key_generation').returningAll().executeTakeFirst();
  if (wallet) await recordEvent(trx, tenantOf(wallet), { type: 'wallet.updated', objectId: walletId, data: serializeWallet(wallet) }, now);
}
