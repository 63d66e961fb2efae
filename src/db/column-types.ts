import type { ColumnType } from 'kysely';

// Column types the table files share (schema.ts, schema-reconciliation.ts).
// Timestamps are written by the application (millisecond precision).

export type Environment = 'sandbox' | 'production';

/** A PostgreSQL numeric: read as a string (no float), written from a string or a bigint. */
export type Numeric = ColumnType<string, string | bigint, string | bigint>;
