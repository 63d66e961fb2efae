// Screenings (spec 2.6): stored with the screened name encrypted, and what developers see of them.
import type { Kysely, Transaction } from 'kysely';
import { z } from 'zod';
import type { DataCipher } from '../crypto';
import type { Database, ScreeningRow } from '../db/schema';
import type { Tenant } from '../db/tenant-scope';
import { recordChangeWithEvent } from '../domain/events';
import { ApiError } from '../errors';
import { newId, objectId } from '../ids';
import type { ScreeningQuery } from './matcher';
import { NoListsLoadedError, type SanctionsScreener, type ScreeningOutcome } from './screener';

type Executor = Kysely<Database> | Transaction<Database>;

/** Runs a screening in memory; 503 when this process has no lists this environment may screen against. */
export function screenOrUnavailable(deps: { sanctions: SanctionsScreener }, query: ScreeningQuery, environment: Tenant['environment']): ScreeningOutcome {
  if (deps.sanctions.ready && !deps.sanctions.readyFor(environment)) throw new ApiError('service_unavailable', deps.sanctions.unavailableReason(environment));
  try {
    return deps.sanctions.screen(query);
  } catch (err) {
    if (err instanceof NoListsLoadedError) throw new ApiError('service_unavailable', err.message);
    throw err;
  }
}

/** Stores a screening (the screened name encrypted) and its `screening.completed` event, in one statement. */
export async function storeScreening(
  trx: Executor,
  deps: { cipher: DataCipher },
  tenant: Tenant,
  query: ScreeningQuery,
  outcome: ScreeningOutcome,
  link: { customerId?: string | null; batchId?: string; batchIndex?: number } = {},
  at = new Date(),
): Promise<ScreeningRow> {
  const row = {
    id: newId('screening', at.getTime()),
    developer_id: tenant.developerId,
    environment: tenant.environment,
    customer_id: link.customerId ?? null,
    batch_id: link.batchId ?? null,
    batch_index: link.batchIndex ?? null,
    status: outcome.status,
    match_count: outcome.matches.length,
    matches: JSON.stringify(outcome.matches),
    query_encrypted: deps.cipher.encrypt(JSON.stringify(query)),
    entity_type: query.type ?? null,
    data_sources_checked: outcome.dataSourcesChecked,
    list_version_ids: outcome.listVersionIds,
    screened_at: at,
    created_at: at,
  };
  const insert = trx.insertInto('screenings').values(row);
  // A batch announces itself once; a single screening and its event are one statement (atomic without a transaction).
  if (link.batchId) await insert.execute();
  else {
    await recordChangeWithEvent(trx, tenant, insert, {
      type: 'screening.completed', objectId: row.id, data: { screening_id: row.id, status: row.status, customer_id: row.customer_id },
    }, at);
  }
  return { ...row, matches: outcome.matches };
}

const versionCache = new Map<number, { source: string; published_on: string | null; sha256: string; entity_count: number }>();

/** List versions are immutable: resolved once per process. */
async function listVersions(db: Executor, ids: number[]) {
  const missing = ids.filter((id) => !versionCache.has(id));
  if (missing.length > 0) {
    const rows = await db.selectFrom('sanctions_list_versions').selectAll().where('id', 'in', missing).execute();
    for (const r of rows) versionCache.set(r.id, { source: r.source, published_on: r.published_on, sha256: r.sha256, entity_count: r.entity_count });
  }
  return ids.map((id) => versionCache.get(id)!).filter(Boolean);
}

export async function serializeScreenings(db: Executor, rows: ScreeningRow[]) {
  await listVersions(db, [...new Set(rows.flatMap((r) => r.list_version_ids))]);
  return Promise.all(rows.map((r) => serializeScreening(db, r)));
}

export async function serializeScreening(db: Executor, row: ScreeningRow) {
  return {
    id: row.id,
    object: 'screening' as const,
    status: row.status,
    match_count: row.match_count,
    matches: row.matches,
    screened_at: row.screened_at.toISOString(),
    data_sources_checked: row.data_sources_checked,
    customer_id: row.customer_id,
    batch_id: row.batch_id,
    list_versions: await listVersions(db, row.list_version_ids),
    created_at: row.created_at.toISOString(),
    // A screening never changes once made.
    updated_at: row.created_at.toISOString(),
  };
}

// A screening as developers see it: API answers and the data of its event.
export const MatchSchema = z
  .object({
    score: z.number().min(0).max(1),
    source: z.string(),
    source_name: z.string(),
    matched_name: z.string(),
    match_type: z.enum(['name_exact', 'name_fuzzy', 'name_phonetic', 'alias', 'transliterated']),
    entity_type: z.string(),
    sanctions_programs: z.array(z.string()),
    listed_on: z.iso.date().nullable(),
    remarks: z.string().nullable(),
    listing_id: z.string().describe('The listing in its source list'),
    score_details: z.object({
      name: z.number(),
      date_of_birth: z.number().nullable().describe('How the birth date moved the score'),
      country: z.number().nullable().describe('How the country moved the score'),
    }),
  })
  .meta({ id: 'ScreeningMatch' });

export const ListVersionSchema = z
  .object({ source: z.string(), published_on: z.string().nullable(), sha256: z.string(), entity_count: z.number().int() })
  .meta({ id: 'SanctionsListVersion' });

export const ScreeningSchema = z
  .object({
    id: objectId('scr'),
    object: z.literal('screening'),
    status: z.enum(['clear', 'potential_match']),
    match_count: z.number().int(),
    matches: z.array(MatchSchema),
    screened_at: z.iso.datetime(),
    data_sources_checked: z.number().int(),
    customer_id: z.string().nullable(),
    batch_id: z.string().nullable(),
    list_versions: z.array(ListVersionSchema).describe('The list versions this screening used'),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime().describe('A screening never changes: its created_at'),
  })
  .meta({ id: 'Screening' });
