import type { Kysely, Transaction } from 'kysely';
import { z } from 'zod';
import type { Database, MpcSessionRow } from '../db/schema';
import { findTenantRow, type Tenant } from '../db/tenant-scope';
import { ASSET_SCALE, formatAmount } from '../domain/money';
import { newId, objectId } from '../ids';
import { newMpcSessionId } from './dkls23';
import { SealedMpcMessageSchema, type SealedMpcMessage } from './channel';

// MPC sessions (docs/MPC.md): one run of the 2-of-3 protocol between the platform (party 1) and the
// customer's signer — a key generation, or one signing — as the API shows it, with the platform's
// messages to the customer (sealed to the customer's session key) that the signer reads.

type Executor = Kysely<Database> | Transaction<Database>;

/** How many rounds the customer's signer posts in either protocol; the platform answers each. */
export const CUSTOMER_ROUNDS = 3;

export const MpcTransactionSchema = z.object({
  chain: z.string(),
  chain_id: z.number().int(),
  nonce: z.number().int(),
  token: z.string().describe('The token contract the transaction calls'),
  currency: z.string(),
  to: z.string().describe('Who the token transfer pays'),
  amount: z.string().describe('Decimal amount of the currency'),
  serialized: z.string().describe('The unsigned EIP-1559 transaction (hex): its keccak256 is `signing_hash`; the signer checks both before it signs'),
}).meta({ id: 'MpcTransaction' });

export const MpcSessionSchema = z.object({
  id: objectId('mpcs'),
  object: z.literal('mpc_session'),
  wallet_id: z.string(),
  kind: z.enum(['key_generation', 'signing']),
  status: z.enum(['awaiting_customer', 'completed', 'failed', 'expired', 'canceled']),
  protocol_session: z.string().describe('The protocol\'s session id (64 hex): every message names it'),
  next_round: z.number().int().nullable().describe('The customer round the platform expects next (1–3); null once the session ended'),
  platform_public_key: z.string().nullable().describe('The platform party\'s session key (X25519, base64): the customer seals its messages to it; null for a moment after the session opens'),
  customer_party: z.number().int().nullable().describe('Signing: the customer\'s share that signs with the platform (2 the device, 3 the backup)'),
  transfer_id: z.string().nullable(),
  transaction: MpcTransactionSchema.nullable(),
  signing_hash: z.string().nullable(),
  signature: z.object({ r: z.string(), s: z.string(), y_parity: z.number().int() }).nullable(),
  address: z.string().nullable().describe('Key generation: the new key\'s address once both sides found the same'),
  messages: z.array(SealedMpcMessageSchema).describe('The platform\'s messages to the customer\'s parties so far, sealed to its session key'),
  failure_reason: z.string().nullable(),
  expires_at: z.iso.datetime(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
}).meta({ id: 'MpcSession' });

/** A session in a list: without its messages (a key generation's are about a megabyte); retrieve the session for them. */
export const MpcSessionSummarySchema = MpcSessionSchema.omit({ messages: true }).meta({ id: 'MpcSessionSummary' });

/** One customer round as the signer posts it. */
export const MpcRoundSubmissionSchema = z.strictObject({
  round: z.number().int().min(1).max(CUSTOMER_ROUNDS),
  public_key: z.string().max(100).optional().describe('Round 1: the customer\'s session key (X25519, base64), which the platform seals its messages to'),
  party: z.union([z.literal(2), z.literal(3)]).optional().describe('Signing, round 1: the customer\'s share that signs (2 the device share, 3 the backup share)'),
  messages: z.array(SealedMpcMessageSchema).min(1).max(4),
  address: z.string().regex(/^0x[0-9a-fA-F]{40}$/).optional().describe('Key generation, round 3: the address the customer\'s parties computed; the wallet exists only if the platform found the same'),
}).meta({ id: 'MpcRoundSubmission' });
export type MpcRoundSubmission = z.infer<typeof MpcRoundSubmissionSchema>;

/** What the platform's answer to a round did to the session (its messages are in the database). */
export interface PlatformAnswer {
  status: MpcSessionRow['status'];
}

/**
 * Keeps the customer's round for the platform's party to read (the workflow's history carries only
 * its number): a round not answered yet may be posted again, the latest taking the place of a refused one.
 */
export async function keepCustomerRound(db: Executor, sessionId: string, submission: MpcRoundSubmission): Promise<void> {
  await db.insertInto('mpc_customer_rounds').values({ session_id: sessionId, round: submission.round, submission: JSON.stringify(submission), created_at: new Date() })
    .onConflict((oc) => oc.columns(['session_id', 'round']).doUpdateSet({ submission: JSON.stringify(submission), created_at: new Date() })).execute();
}

export async function customerRound(db: Executor, sessionId: string, round: number): Promise<MpcRoundSubmission> {
  const row = await db.selectFrom('mpc_customer_rounds').select('submission').where('session_id', '=', sessionId).where('round', '=', round).executeTakeFirstOrThrow();
  return row.submission as MpcRoundSubmission;
}

export async function serializeMpcSession(db: Executor, row: MpcSessionRow) {
  const rounds = await db.selectFrom('mpc_platform_rounds').select(['round', 'messages']).where('session_id', '=', row.id).orderBy('round').execute();
  return { ...await serializeMpcSessionSummary(db, row), messages: rounds.flatMap((r) => r.messages as SealedMpcMessage[]) };
}

/** The session as lists show it: all but its messages. */
export async function serializeMpcSessionSummary(db: Executor, row: MpcSessionRow) {
  const wallet = row.kind === 'key_generation' && row.status === 'completed'
    ? await db.selectFrom('wallets').select('addresses').where('id', '=', row.wallet_id).executeTakeFirst() : undefined;
  const tx = row.transaction;
  return {
    id: row.id, object: 'mpc_session' as const, wallet_id: row.wallet_id, kind: row.kind, status: row.status, protocol_session: row.protocol_session,
    next_round: row.status === 'awaiting_customer' && row.rounds_done < CUSTOMER_ROUNDS ? row.rounds_done + 1 : null,
    platform_public_key: row.platform_public_key, customer_party: row.customer_party, transfer_id: row.transfer_id,
    transaction: tx && {
      chain: row.chain!, chain_id: tx.chain_id, nonce: tx.nonce, token: tx.token, currency: tx.currency, to: tx.to,
      amount: formatAmount(BigInt(tx.amount_minor), ASSET_SCALE[tx.currency]!), serialized: tx.serialized,
    },
    signing_hash: row.signing_hash,
    signature: row.signature && { r: row.signature.r, s: row.signature.s, y_parity: row.signature.yParity },
    address: wallet ? (Object.values(wallet.addresses)[0] ?? null) : null,
    failure_reason: row.failure_reason,
    expires_at: row.expires_at.toISOString(), created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

export const findMpcSession = (db: Executor, tenant: Tenant, id: string) => findTenantRow(db, 'mpc_sessions', tenant, id, { what: 'MPC session' });

/** A new session of the wallet, awaiting the customer, with a fresh protocol session id. */
export async function insertMpcSession(
  trx: Transaction<Database>, tenant: Tenant,
  values: { walletId: string; kind: MpcSessionRow['kind']; expiresAt: Date; transferId?: string; chain?: string; transaction?: MpcSessionRow['transaction']; signingHash?: string },
): Promise<MpcSessionRow> {
  const now = new Date();
  return trx.insertInto('mpc_sessions').values({
    id: newId('mpcSession', now.getTime()), developer_id: tenant.developerId, environment: tenant.environment, wallet_id: values.walletId, kind: values.kind,
    status: 'awaiting_customer', protocol_session: newMpcSessionId(), customer_party: null, platform_public_key: null, customer_public_key: null,
    transfer_id: values.transferId ?? null, chain: values.chain ?? null, transaction: values.transaction ? JSON.stringify(values.transaction) : null,
    signing_hash: values.signingHash ?? null, signature: null, failure_reason: null, expires_at: values.expiresAt, created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
}

/** Ends a session still awaiting the customer (expired, canceled, or failed with a reason); false if it had ended already. */
export async function endMpcSession(trx: Transaction<Database>, sessionId: string, status: 'failed' | 'expired' | 'canceled', reason: string): Promise<boolean> {
  const ended = await trx.updateTable('mpc_sessions').set({ status, failure_reason: reason, updated_at: new Date() })
    .where('id', '=', sessionId).where('status', '=', 'awaiting_customer').executeTakeFirst();
  return ended.numUpdatedRows > 0n;
}
