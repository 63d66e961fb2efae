import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A developer's webhook endpoints. The secret (and, during a rotation, the previous one until it
    -- expires) is encrypted with the DataCipher; enabled_events is a list of catalogue names or ["*"].
    create table webhook_endpoints (
      id text primary key,
      developer_id text not null,
      environment text not null,
      url text not null,
      description text,
      enabled_events jsonb not null,
      status text not null,
      status_reason text,
      secret_encrypted text not null,
      previous_secret_encrypted text,
      previous_secret_expires_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz
    );
    create index webhook_endpoints_tenant on webhook_endpoints (developer_id, environment) where deleted_at is null;

    -- One row per event and endpoint, written in the transaction that writes the event (the outbox
    -- fans out): an event exists exactly when its deliveries do, and none is ever skipped.
    create table webhook_deliveries (
      id bigserial primary key,
      event_id text not null,
      endpoint_id text not null,
      status text not null,
      attempts integer not null default 0,
      next_attempt_at timestamptz not null,
      last_error text,
      created_at timestamptz not null,
      delivered_at timestamptz,
      unique (event_id, endpoint_id)
    );
    create index webhook_deliveries_due on webhook_deliveries (endpoint_id, next_attempt_at) where status = 'pending';

    -- Each attempt, as the developer sees it on the event.
    create table webhook_attempts (
      id bigserial primary key,
      delivery_id bigint not null references webhook_deliveries (id),
      attempted_at timestamptz not null,
      status_code integer,
      error text,
      duration_ms integer not null
    );
    create index webhook_attempts_delivery on webhook_attempts (delivery_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table webhook_attempts; drop table webhook_deliveries; drop table webhook_endpoints`.execute(db);
}
