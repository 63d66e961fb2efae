import { sql, type Kysely, type Transaction } from 'kysely';
import { privateKeyToAddress, generatePrivateKey } from 'viem/accounts';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ChainAdapters } from '../chains';
import { ChainNeedsOperatorError, ChainUnavailableError } from '../chains/chain-adapter';
import { findCustodyCustomer } from '../customers/customer';
import type { Database, WalletRow } from '../db/schema';
import { findTenantRow, type Tenant } from '../db/tenant-scope';
import { encodeChainAddress } from '../domain/bank-validation';
import { walletSolanaAddress } from '../chains/solana/keys';
import { recordEvent } from '../domain/events';
import { ASSET_SCALE, formatAmount } from '../domain/money';
import { CHAIN_RAILS, RAILS, isEvmChain, isSimulatedChain, type ChainRail } from '../domain/rails';
import { ApiError, invalidField } from '../errors';
import { newId, objectId } from '../ids';
import type { KeyVault } from '../keys/key-vault';
import type { ProviderAvailability } from '../providers/availability';
import { walletAddressKey } from './address-key';

// Customers' wallets (spec 2.4, docs/WALLETS.md): custodial wallets, their keys sealed at rest, and
// balances read from the chain; their history is src/wallets/watcher.ts's.

type Executor = Kysely<Database> | Transaction<Database>;

export const WalletCreate = z.strictObject({
  customer_id: z.string().min(1),
  type: z.enum(['custodial', 'mpc']),
  label: z.string().trim().max(200).optional(),
  chains: z.array(z.string().min(1).max(40)).min(1, 'must name at least one chain').max(20),
  mpc_config: z.strictObject({ threshold: z.number().int(), total_shares: z.number().int(), key_type: z.literal('ecdsa') }).optional(),
});

export const WalletSchema = z.object({
  id: objectId('wal'),
  object: z.literal('wallet'),
  customer_id: z.string(),
  type: z.enum(['custodial', 'mpc']),
  label: z.string().nullable(),
  chains: z.array(z.string()),
  addresses: z.record(z.string(), z.string()).describe('The wallet\'s address on each of its chains (one address on every EVM chain)'),
  simulated_chains: z.array(z.string()).describe('Its chains served by the sandbox simulator (stellar, tron): no node for them runs here'),
  status: z.enum(['active', 'key_generation', 'failed']).describe('`key_generation` (MPC wallets: until the customer\'s signer and the platform hold their shares), `active`, or `failed` (a key generation that expired or failed)'),
  mpc_config: z.object({ threshold: z.number().int(), total_shares: z.number().int(), key_type: z.literal('ecdsa') }).nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
}).meta({ id: 'Wallet' });

export const BalanceSchema = z.object({
  chain: z.string(),
  currency: z.string(),
  balance: z.string().describe('Decimal: what the wallet can spend: held in blocks deep enough to count, less what its open transfers reserved'),
  pending: z.string().describe('Decimal: what is in motion: arrived in newer blocks (not yet counted), or reserved by its open transfers'),
}).meta({ id: 'WalletBalance' });

export function serializeWallet(row: WalletRow) {
  return {
    id: row.id, object: 'wallet' as const, customer_id: row.customer_id, type: row.type, label: row.label, chains: row.chains,
    addresses: row.addresses, simulated_chains: row.chains.filter((c) => isSimulatedChain(c as ChainRail)), status: row.status, mpc_config: row.mpc_config, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

/** What a wallet's sealed key (custodial) or platform share (mpc) is bound to. */
export const walletKeyContext = (wallet: { id: string; type: 'custodial' | 'mpc' }) =>
  ({ purpose: wallet.type === 'mpc' ? 'mpc-platform-share' : 'wallet-key', wallet_id: wallet.id });

export const findWallet = (db: Executor, tenant: Tenant, id: string) => findTenantRow(db, 'wallets', tenant, id, { what: 'wallet' });

/** Lower-case chain names the platform serves; `chains[i]` names the first that is not. */
function checkChains(chains: string[]): ChainRail[] {
  return chains.map((raw, i) => {
    const chain = raw.toLowerCase();
    if (!(CHAIN_RAILS as readonly string[]).includes(chain)) {
      throw invalidField('body', `chains[${i}]`, `'${raw}' is not a chain wallets are served on (${CHAIN_RAILS.join(', ')})`);
    }
    return chain as ChainRail;
  });
}

/**
 * The wallet's address on a chain: the key's EVM address; on solana the address of an ed25519 key
 * derived from it; where the chain's adapter derives it (bitcoin: its network's P2WPKH address of a
 * key derived from it), the adapter's; on the simulated chains an address derived from the key.
 */
function addressOn({ chain, walletAddress }: ServedChain, privateKey: `0x${string}`): string {
  if (walletAddress) return walletAddress(Buffer.from(privateKey.slice(2), 'hex'));
  if (isEvmChain(chain)) return privateKeyToAddress(privateKey);
  if (chain === 'solana') return walletSolanaAddress(Buffer.from(privateKey.slice(2), 'hex'));
  if (isSimulatedChain(chain)) return encodeChainAddress(chain, createHash('sha256').update(`${chain}:`).update(Buffer.from(privateKey.slice(2), 'hex')).digest());
  throw new Error(`no address scheme for ${chain}`);
}

/**
 * A custodial wallet: an active, KYC-approved customer with `can_hold_custody`; one fresh key, sealed
 * under the key vault (bound to the wallet id) before it is stored; the plaintext key lives only
 * inside this call. Announced as `wallet.created`.
 */
export async function createWallet(
  trx: Transaction<Database>, deps: { keys: KeyVault }, tenant: Tenant, body: z.output<typeof WalletCreate>, chains: ServedChain[],
): Promise<WalletRow> {
  const customer = await findCustodyCustomer(trx, tenant, body.customer_id, 'custodial wallets');
  const now = new Date();
  const id = newId('wallet', now.getTime());
  const privateKey = generatePrivateKey();
  const addresses = Object.fromEntries(chains.map((served) => [served.chain, addressOn(served, privateKey)]));
  const sealed = await deps.keys.seal(Buffer.from(privateKey.slice(2), 'hex'), walletKeyContext({ id, type: 'custodial' }));
  const row = await trx.insertInto('wallets').values({
    id, developer_id: tenant.developerId, environment: tenant.environment, customer_id: customer.id, type: 'custodial', label: body.label ?? null,
    chains: JSON.stringify(chains.map((c) => c.chain)), addresses: JSON.stringify(addresses), key_sealed: sealed, kek_id: deps.keys.currentKekId, status: 'active', mpc_config: null,
    created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  await trx.insertInto('wallet_addresses')
    .values(chains.map(({ chain }) => ({ chain, address: walletAddressKey(chain, addresses[chain]!), wallet_id: id }))).execute();
  // The chain's watcher reads from before the wallet existed (an earlier cursor stays: it is behind).
  await trx.insertInto('chain_watch_cursors').values(chains.map(({ chain, position }) => ({ chain, position, updated_at: now })))
    .onConflict((oc) => oc.column('chain').doNothing()).execute();
  await recordEvent(trx, tenant, { type: 'wallet.created', objectId: id, data: serializeWallet(row) }, now);
  return row;
}

/** A chain a new wallet holds, and the chain's position before the wallet exists (where its watcher may start). */
export interface ServedChain {
  chain: ChainRail;
  position: string;
  /** The adapter's address for a wallet key, on chains whose addresses depend on its configuration (bitcoin's network). */
  walletAddress?: (walletKey: Uint8Array) => string;
}

/**
 * What can be checked before a database transaction opens: the type, and the chains (named right,
 * and served here: a chain without a node, no RPC address, cannot hold a wallet). A 400 names the field.
 */
export async function prepareWalletChains(
  deps: { chains: ChainAdapters; availability: ProviderAvailability }, tenant: Tenant, body: z.output<typeof WalletCreate>,
): Promise<ServedChain[]> {
  const chains = [...new Set(checkChains(body.chains))];
  // Live wallets only on chains with a real node: a 503, nothing created (src/providers/availability.ts).
  chains.forEach((chain, i) => {
    const why = deps.availability.railUnavailable(tenant.environment, chain);
    if (why) throw new ApiError('service_unavailable', `${why}: nothing was created`, { location: 'body', key: `chains[${i}]` });
  });
  const adapters = deps.chains;
  return Promise.all(chains.map(async (chain, i) => {
    try {
      return { chain, position: await adapters[chain].currentPosition(), walletAddress: adapters[chain].walletAddress?.bind(adapters[chain]) };
    } catch (err) {
      if (err instanceof ChainUnavailableError && !(err instanceof ChainNeedsOperatorError)) throw invalidField('body', `chains[${i}]`, `${chain} is not served here: ${err.message}`);
      throw err;
    }
  }));
}

/** What a wallet's open transfers hold back: amounts by `{chain}|{currency}`, and how many sends each chain still owes. */
export interface WalletReservations {
  amounts: Map<string, bigint>;
  sends: Map<string, number>;
}

/**
 * What the wallet's open transfers have reserved (those still awaiting the deposit the wallet sends):
 * no longer spendable, not yet gone on chain as far as a confirmed balance shows. On the chains of
 * `sentCounted`, whose balance counts a wallet's send once it is signed and stored, a transfer whose
 * send is stored reserves nothing more: its coins are spent and its change counted already.
 */
export async function walletReservations(db: Executor, walletId: string, sentCounted: readonly string[] = []): Promise<WalletReservations> {
  let query = db.selectFrom('transfers')
    .select(['source_rail', 'source_currency', sql<string>`sum(amount_minor)::text`.as('reserved'), sql<string>`count(*)::text`.as('sends')])
    .where('source_wallet_id', '=', walletId).where('state', '=', 'awaiting_funds');
  if (sentCounted.length > 0) {
    query = query.where((eb) => eb.or([
      eb('source_rail', 'not in', sentCounted),
      eb.not(eb.exists(eb.selectFrom('wallet_signed_transactions as s').select('s.transfer_id').whereRef('s.transfer_id', '=', 'transfers.id'))),
    ]));
  }
  const rows = await query.groupBy(['source_rail', 'source_currency']).execute();
  const sends = new Map<string, number>();
  for (const r of rows) sends.set(r.source_rail, (sends.get(r.source_rail) ?? 0) + Number(r.sends));
  return { amounts: new Map(rows.map((r) => [`${r.source_rail}|${r.source_currency}`, BigInt(r.reserved)])), sends };
}

/**
 * Every asset of every chain of the wallet (the native asset first), read from the chain: `balance`
 * is what it can spend (held in blocks deep enough, less what its open transfers reserved);
 * `pending` what is in motion (arrived in newer blocks, or reserved by its open transfers).
 */
export async function walletBalances(db: Executor, chains: ChainAdapters, row: WalletRow) {
  if (row.status !== 'active') return []; // no key, no address yet (an MPC wallet's key generation)
  const reserved = await walletReservations(db, row.id);
  const perChain = await Promise.all((row.chains as ChainRail[]).map(async (chain) => {
    const adapter = chains[chain];
    // bitcoin's one currency is its native asset: listed once.
    const assets = [...new Set([adapter.nativeAsset, ...RAILS[chain].currencies])];
    const balances = await adapter.balancesOf(row.addresses[chain]!, assets);
    return balances.map((b) => {
      const scale = ASSET_SCALE[b.asset] ?? 18;
      const out = reserved.amounts.get(`${chain}|${b.asset}`) ?? 0n;
      const incoming = b.latestMinor > b.confirmedMinor ? b.latestMinor - b.confirmedMinor : 0n;
      const spendable = b.confirmedMinor > out ? b.confirmedMinor - out : 0n;
      return { chain, currency: b.asset, balance: formatAmount(spendable, scale), pending: formatAmount(incoming + out, scale) };
    });
  }));
  return perChain.flat();
}
