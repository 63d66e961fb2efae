import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Environment } from './column-types';

// Sanctions lists and screenings (src/sanctions/, docs/SANCTIONS.md).

export interface SanctionsListVersionsTable {
  id: Generated<number>;
  source: string;
  sha256: string;
  published_on: string | null;
  entity_count: number;
  first_loaded_at: Date;
}

export interface ScreeningBatchesTable {
  id: string;
  developer_id: string;
  environment: Environment;
  status: 'processing' | 'completed' | 'failed';
  total: number;
  processed: number;
  potential_matches: number;
  entities_encrypted: string;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

export interface ScreeningsTable {
  id: string;
  developer_id: string;
  environment: Environment;
  customer_id: string | null;
  batch_id: string | null;
  batch_index: number | null;
  status: 'clear' | 'potential_match';
  match_count: number;
  matches: ColumnType<unknown[], string, string>;
  query_encrypted: string;
  entity_type: string | null;
  data_sources_checked: number;
  list_version_ids: number[];
  screened_at: Date;
  created_at: Date;
}

export type ScreeningRow = Selectable<ScreeningsTable>;

export type ScreeningBatchRow = Selectable<ScreeningBatchesTable>;

export interface SanctionsTables {
  sanctions_list_versions: SanctionsListVersionsTable;
  screening_batches: ScreeningBatchesTable;
  screenings: ScreeningsTable;
}
