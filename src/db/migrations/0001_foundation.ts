import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table developers (
      id text primary key,
      name text not null,
      rate_limit_per_second integer,
      daily_quota integer,
      created_at timestamptz not null
    );

    create table api_keys (
      id text primary key,
      developer_id text not null references developers(id),
      environment text not null check (environment in ('sandbox', 'production')),
      kind text not null check (kind in ('secret', 'publishable')),
      plan text not null check (plan in ('sandbox', 'production', 'enterprise')),
      permissions text[],
      key_hash text not null unique,
      key_hint text not null,
      created_at timestamptz not null,
      revoked_at timestamptz
    );

    create table customers (
      id text primary key,
      developer_id text not null references developers(id),
      environment text not null check (environment in ('sandbox', 'production')),
      type text not null check (type in ('individual', 'business')),
      email text not null,
      first_name text,
      last_name text,
      business_name text,
      phone text,
      date_of_birth text,
      address jsonb,
      tax_id_encrypted text,
      status text not null check (status in ('pending', 'active', 'suspended', 'deleted')),
      kyc_status text not null check (kyc_status in ('not_started', 'pending', 'incomplete', 'manual_review',
        'under_review', 'awaiting_ubo', 'approved', 'rejected')),
      risk_rating text check (risk_rating in ('low', 'medium', 'high')),
      endorsements text[] not null default '{}',
      rejection_reasons jsonb,
      incomplete_reasons jsonb,
      kyc_link_token_hash text unique,
      kyc_link_expires_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz
    );
    create index customers_tenant_order on customers (developer_id, environment, created_at desc, id desc);
    create index customers_tenant_email on customers (developer_id, environment, email);

    create table kyc_submissions (
      id text primary key,
      customer_id text not null references customers(id),
      developer_id text not null,
      environment text not null,
      document_type text,
      document_front_encrypted text,
      selfie_encrypted text,
      beneficial_owners_encrypted text,
      beneficial_owner_count integer not null default 0,
      channel text not null,
      created_at timestamptz not null
    );
    create index kyc_submissions_customer on kyc_submissions (customer_id, created_at);

    create table events (
      id text primary key,
      developer_id text not null,
      environment text not null,
      type text not null,
      object_id text not null,
      data jsonb not null,
      previous_attributes jsonb,
      created_at timestamptz not null
    );
    create index events_tenant_order on events (developer_id, environment, created_at desc, id desc);
    create index events_object on events (object_id, created_at);

    create table idempotency_keys (
      developer_id text not null,
      environment text not null,
      key text not null,
      method text not null,
      path text not null,
      body_hash text not null,
      state text not null check (state in ('in_progress', 'completed')),
      response_status integer,
      response_body jsonb,
      locked_at timestamptz not null,
      created_at timestamptz not null,
      seq bigserial,
      primary key (developer_id, environment, key)
    );
    create index idempotency_keys_created on idempotency_keys (created_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table idempotency_keys, events, kyc_submissions, customers, api_keys, developers`.execute(db);
}
