import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Live transfers (funded, not canceled or refunded) summed per customer, and per payment route,
    -- by source currency and UTC hour of creation: the review's 24-hour limits (the customer's
    -- velocity, src/transfers/review.ts; a route's per-day limit, src/payment-routes/limits.ts) read
    -- at most 25 rows of it instead of every transfer of the day. Kept by the triggers below, in the
    -- statement that changes a transfer's state, whichever code path changes it.
    create table transfer_volumes (
      owner_type text not null check (owner_type in ('customer', 'route')),
      owner_id text not null,
      currency text not null,
      hour timestamptz not null,
      amount_minor numeric(78, 0) not null,
      primary key (owner_type, owner_id, hour, currency)
    );
    create index transfer_volumes_hour on transfer_volumes (hour);

    create function transfer_volumes_follow() returns trigger language plpgsql as $$
    declare
      delta numeric;
    begin
      -- Entering the live states adds the amount; leaving them takes it back out.
      if tg_op = 'INSERT' or old.state in ('awaiting_funds', 'canceled', 'refunded') then
        delta := new.amount_minor;
      else
        delta := -new.amount_minor;
      end if;
      insert into transfer_volumes (owner_type, owner_id, currency, hour, amount_minor)
      select o.owner_type, o.owner_id, new.source_currency, date_trunc('hour', new.created_at, 'UTC'), delta
      from (values ('customer', new.customer_id), ('route', new.route_id)) as o (owner_type, owner_id)
      where o.owner_id is not null
      on conflict (owner_type, owner_id, hour, currency) do update set amount_minor = transfer_volumes.amount_minor + excluded.amount_minor;
      return null;
    end
    $$;
    create trigger transfer_volumes_on_insert after insert on transfers for each row
      when (new.state not in ('awaiting_funds', 'canceled', 'refunded'))
      execute function transfer_volumes_follow();
    create trigger transfer_volumes_on_state after update of state on transfers for each row
      when ((old.state in ('awaiting_funds', 'canceled', 'refunded')) <> (new.state in ('awaiting_funds', 'canceled', 'refunded')))
      execute function transfer_volumes_follow();

    -- The transfers already live within the window.
    insert into transfer_volumes (owner_type, owner_id, currency, hour, amount_minor)
    select o.owner_type, o.owner_id, t.source_currency, date_trunc('hour', t.created_at, 'UTC'), sum(t.amount_minor)
    from transfers t
    cross join lateral (values ('customer', t.customer_id), ('route', t.route_id)) as o (owner_type, owner_id)
    where o.owner_id is not null and t.state not in ('awaiting_funds', 'canceled', 'refunded') and t.created_at >= now() - interval '26 hours'
    group by 1, 2, 3, 4;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop trigger transfer_volumes_on_state on transfers;
    drop trigger transfer_volumes_on_insert on transfers;
    drop function transfer_volumes_follow();
    drop table transfer_volumes;
  `.execute(db);
}
