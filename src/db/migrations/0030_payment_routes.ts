import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A standing route (src/routes/): a permanent deposit address or reference of a customer's,
    -- and where every deposit to it goes. A row, not a process: the chain watchers and the rail-event
    -- intake match deposits to it. kind: 'liquidation_address' (a chain address) or
    -- 'virtual_account' (a bank deposit reference). destination holds the transfer's destination leg.
    create table payment_routes (
      id text primary key,
      developer_id text not null,
      environment text not null,
      customer_id text not null,
      kind text not null check (kind in ('liquidation_address', 'virtual_account')),
      status text not null check (status in ('active', 'deactivated')),
      source_rail text not null,
      source_currency text not null,
      -- The address in the form the watcher compares (EVM: lower case) and its HD index (sweeps).
      address text,
      display_address text,
      deposit_index bigint,
      deposit_reference text,
      destination jsonb not null,
      developer_fee_percent numeric(7, 4) not null default 0,
      return_address text,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    -- The watcher's match: one indexed lookup per page of the chain's transfers, however many routes.
    create unique index payment_routes_address on payment_routes (source_rail, address) where address is not null;
    create unique index payment_routes_reference on payment_routes (deposit_reference) where deposit_reference is not null;
    create index payment_routes_customer on payment_routes (developer_id, environment, customer_id, id);

    -- Each deposit a route received, once (deposit_key: the chain's transfer reference, or the rail's
    -- payment id), and what became of it: 'confirming' until deep enough, then 'confirmed', then
    -- 'transferred' once its transfer exists and its workflow runs; 'dropped' when its chain
    -- transaction left the chain; 'held' for operators (reason says why: route deactivated, another
    -- currency, the transfer refused).
    create table route_deposits (
      id text primary key,
      route_id text not null references payment_routes (id),
      developer_id text not null,
      environment text not null,
      deposit_key text not null unique,
      rail text not null,
      currency text not null,
      amount_minor numeric(78, 0) not null,
      tx_hash text,
      position text,
      sender text,
      confirmations integer not null default 0,
      state text not null check (state in ('confirming', 'confirmed', 'transferred', 'dropped', 'held')),
      transfer_id text unique,
      reason text,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index route_deposits_route on route_deposits (route_id, id);
    create index route_deposits_open on route_deposits (rail, state) where state in ('confirming', 'confirmed');

    -- One sweep at a time per deposit address: the others from it wait (src/chains/evm/sweeps.ts).
    create index chain_sweeps_pending_from on chain_sweeps (chain, from_address) where status = 'pending';

    alter table transfers add column route_id text;
    create index transfers_route on transfers (route_id, id) where route_id is not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index chain_sweeps_pending_from; alter table transfers drop column route_id; drop table route_deposits; drop table payment_routes`.execute(db);
}
