import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- MPC wallets (docs/MPC.md): the platform holds one share of a 2-of-3 key, sealed like a custodial
    -- key (key_sealed, under kek_id); an MPC wallet has no key or address until its key generation ends.
    alter table wallets alter column key_sealed drop not null;
    alter table wallets alter column kek_id drop not null;
    alter table wallets add column mpc_config jsonb;

    -- One run of the threshold protocol between the platform (party 1) and the customer's signer:
    -- a key generation, or the signing of one transaction. Messages travel sealed end to end between
    -- the parties' session keys (X25519, HPKE); the platform's state between rounds is sealed too.
    create table mpc_sessions (
      id text primary key,
      developer_id text not null,
      environment text not null,
      wallet_id text not null references wallets (id),
      kind text not null,
      status text not null,
      protocol_session text not null unique,
      rounds_done integer not null default 0,
      customer_party integer,
      platform_public_key text,
      customer_public_key text,
      transfer_id text,
      chain text,
      transaction jsonb,
      signing_hash text,
      signature jsonb,
      failure_reason text,
      expires_at timestamptz not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index mpc_sessions_tenant on mpc_sessions (developer_id, environment, id);
    create index mpc_sessions_wallet on mpc_sessions (wallet_id, id);

    -- The platform's part of each round, written once: its state after the round (sealed; null once
    -- the protocol ended) and what it sent (sealed to the customer's session key). A retried round
    -- answers these rows instead of running again.
    -- The customer's round as its signer posted it (its messages sealed to the platform), kept out of
    -- the workflow's history (a key generation's messages are about a megabyte).
    create table mpc_customer_rounds (
      session_id text not null references mpc_sessions (id),
      round integer not null,
      submission jsonb not null,
      created_at timestamptz not null,
      primary key (session_id, round)
    );

    create table mpc_platform_rounds (
      session_id text not null references mpc_sessions (id),
      round integer not null,
      state_sealed text,
      messages jsonb not null,
      created_at timestamptz not null,
      primary key (session_id, round)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table mpc_platform_rounds;
    drop table mpc_customer_rounds;
    drop table mpc_sessions;
    alter table wallets drop column mpc_config;
  `.execute(db);
}
