import type { Kysely, Transaction } from 'kysely';
import type { AppDeps, Tenant } from '../../api/context';
import { ApiError } from '../../api/errors';
import type { Database, ScreeningRow } from '../../db/schema';
import { recordEvent } from '../../domain/events';
import { newId } from '../../ids';
import { NoListsLoadedError, type ScreeningOutcome } from '../../sanctions/screener';
import type { ScreeningQuery } from '../../sanctions/matcher';

type Executor = Kysely<Database> | Transaction<Database>;

/** Runs a screening in memory; 503 when this process has no lists to screen against. */
export function screenOrUnavailable(deps: Pick<AppDeps, 'sanctions'>, query: ScreeningQuery): ScreeningOutcome {
  try {
    return deps.sanctions.screen(query);
  } catch (err) {
    if (err instanceof NoListsLoadedError) throw new ApiError('service_unavailable', err.message);
    throw err;
  }
}

/** Stores a screening (the screened name encrypted) and its `screening.completed` event. */
export async function storeScreening(
  trx: Executor,
  deps: Pick<AppDeps, 'cipher'>,
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
  await trx.insertInto('screenings').values(row).execute();
  if (!link.batchId) {
    await recordEvent(trx, tenant, {
      type: 'screening.completed',
      objectId: row.id,
      data: { screening_id: row.id, status: row.status, customer_id: row.customer_id },
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
  };
}
