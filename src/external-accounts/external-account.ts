// External accounts (spec 2.3): bank accounts and crypto addresses of customers, their records and
// what developers see of them.
import type { Kysely, Transaction } from 'kysely';
import { z } from 'zod';
import type { Database, ExternalAccountRow } from '../db/schema';
import { findTenantRow, type Tenant } from '../db/tenant-scope';
import { CRYPTO_CHAINS } from '../domain/rails';
import { objectId } from '../ids';

type Executor = Kysely<Database> | Transaction<Database>;

// An external account as developers see it: API answers and the data of its events.
export const EXTERNAL_ACCOUNT_STATUSES = ['pending_verification', 'verified', 'verification_failed', 'active', 'deleted'] as const;

export const ExternalAccountSchema = z
  .object({
    id: objectId('ext'),
    object: z.literal('external_account'),
    customer_id: z.string(),
    type: z.enum(['us_bank_account', 'international_bank_account', 'mx_bank_account', 'crypto_address']),
    status: z.enum(EXTERNAL_ACCOUNT_STATUSES),
    account_name: z.string().nullable(),
    last4: z.string().nullable().describe('Last four characters of the account number, IBAN or CLABE; never the full number'),
    account_type: z.enum(['checking', 'savings']).optional(),
    routing_number: z.string().optional(),
    bank_name: z.string().nullable().optional(),
    bank_country: z.string().optional(),
    bic: z.string().optional(),
    bank_code: z.string().optional().describe('CLABE: the three-digit bank code'),
    chain: z.enum(CRYPTO_CHAINS).optional(),
    address: z.string().optional().describe('Crypto addresses are public and shown in full'),
    label: z.string().nullable().optional(),
    failure_reason: z.string().nullable().optional(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'ExternalAccount' });

export function findExternalAccount(db: Executor, tenant: Tenant, id: string, opts: { forUpdate?: boolean } = {}) {
  return findTenantRow(db, 'external_accounts', tenant, id, { what: 'external account', ...opts });
}

/** Bank details as a payment team needs them, the account number reduced to its last four. */
export function serializeExternalAccount(row: ExternalAccountRow) {
  const common = {
    id: row.id,
    object: 'external_account' as const,
    customer_id: row.customer_id,
    type: row.type,
    status: row.status,
    account_name: row.account_name,
    last4: row.last4,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...(row.failure_reason ? { failure_reason: row.failure_reason } : {}),
  };
  switch (row.type) {
    case 'us_bank_account':
      return { ...common, account_type: row.account_type as 'checking' | 'savings', routing_number: row.routing_number!, bank_name: row.bank_name };
    case 'international_bank_account':
      return { ...common, bic: row.bic!, bank_name: row.bank_name, bank_country: row.bank_country! };
    case 'mx_bank_account':
      return { ...common, bank_code: row.routing_number!, bank_name: row.bank_name };
    case 'crypto_address':
      return { ...common, chain: row.chain as never, address: row.address!, label: row.label };
  }
}

/**
 * What identifies an account, for finding it linked twice (kept as a keyed fingerprint): from what
 * the request gives, or from a stored row with its secret decrypted (key rotation).
 */
export function accountIdentity(a: {
  type: string; secret: string | null; routing_number?: string | null; chain?: string | null; address?: string | null;
}): string {
  switch (a.type) {
    case 'us_bank_account':
      return `${a.type}:${a.routing_number}:${a.secret}`;
    case 'crypto_address': {
      // EVM addresses are case-insensitive; the others are case-sensitive.
      const evm = a.address!.startsWith('0x');
      return `${a.type}:${a.chain}:${evm ? a.address!.toLowerCase() : a.address}`;
    }
    default: // international (IBAN) and mx (CLABE) accounts: the secret is the identity
      return `${a.type}:${a.secret}`;
  }
}
