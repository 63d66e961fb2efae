import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table sanctions_list_versions (
      id serial primary key,
      source text not null,
      sha256 text not null,
      published_on text,
      entity_count integer not null,
      first_loaded_at timestamptz not null,
      unique (source, sha256)
    );

    create table screening_batches (
      id text primary key,
      developer_id text not null,
      environment text not null,
      status text not null check (status in ('processing', 'completed', 'failed')),
      total integer not null,
      processed integer not null default 0,
      potential_matches integer not null default 0,
      entities_encrypted text not null,
      created_at timestamptz not null,
      completed_at timestamptz
    );
    create index screening_batches_tenant_order on screening_batches (developer_id, environment, created_at desc, id desc);

    create table screenings (
      id text primary key,
      developer_id text not null,
      environment text not null,
      customer_id text,
      batch_id text references screening_batches(id),
      batch_index integer,
      status text not null check (status in ('clear', 'potential_match')),
      match_count integer not null,
      matches jsonb not null,
      query_encrypted text not null,
      entity_type text,
      data_sources_checked integer not null,
      list_version_ids integer[] not null,
      screened_at timestamptz not null,
      created_at timestamptz not null
    );
    create index screenings_tenant_order on screenings (developer_id, environment, created_at desc, id desc);
    create index screenings_customer on screenings (customer_id, created_at desc);
    create unique index screenings_batch_item on screenings (batch_id, batch_index);

    -- Why a KYC case waits for an operator (e.g. a potential sanctions match).
    alter table customers add column review_reasons jsonb;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table customers drop column review_reasons`.execute(db);
  await sql`drop table screenings, screening_batches, sanctions_list_versions`.execute(db);
}
