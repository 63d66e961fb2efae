import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A deposit address may be swept more than once: the transfer's deposit (keyed by the transfer id,
    -- as before) and each stray deposit returned to its sender (keyed by the stray's payment key).
    alter table chain_sweeps add column sweep_key text;
    update chain_sweeps set sweep_key = transfer_id;
    alter table chain_sweeps alter column sweep_key set not null;
    alter table chain_sweeps drop constraint chain_sweeps_pkey;
    alter table chain_sweeps add primary key (sweep_key);
    create index chain_sweeps_transfer on chain_sweeps (transfer_id);

    -- Stray deposits go back to their sender (deposit_return); one held for compliance stays 'held'.
    alter table payments drop constraint payments_kind_check;
    alter table payments add constraint payments_kind_check check (kind in ('deposit', 'payout', 'return', 'refund', 'deposit_return'));
    alter table payments drop constraint payments_status_check;
    alter table payments add constraint payments_status_check check (status in ('pending', 'submitted', 'settled', 'failed', 'returned', 'held'));

    -- What the platform holds for the sender of a stray deposit until it is returned.
    alter table ledger_accounts drop constraint ledger_accounts_purpose_check;
    alter table ledger_accounts add constraint ledger_accounts_purpose_check check (purpose in ('customer_funds', 'rail_clearing', 'chain_treasury',
      'platform_fees', 'developer_fees', 'fx_conversion', 'unapplied_deposits'));

    -- How far the stray-deposit scan has read a deposit address once its transfer stopped watching it.
    alter table transfers add column stray_scan_position text;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table transfers drop column stray_scan_position;
    delete from chain_sweeps where sweep_key <> transfer_id;
    alter table chain_sweeps drop constraint chain_sweeps_pkey;
    alter table chain_sweeps drop column sweep_key;
    alter table chain_sweeps add primary key (transfer_id);
  `.execute(db);
}
