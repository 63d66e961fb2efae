import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { sql } from 'kysely';
import type { Db } from '../../src/db';

// How much work a transfer asks of the system, counted by the system itself: PostgreSQL's
// pg_stat_statements for the statements a database role ran, Temporal's history for a workflow.
// Counts do not move with the machine or the minute; bench:transfers prints them and
// test/e2e/transfer-work-counts.test.ts holds them.

export interface HistoryCounts {
  events: number;
  workflowTasks: number;
  activities: number;
  localActivities: number;
  /** Bytes of every payload the history holds (inputs, results, Update arguments, markers, search attributes, memo). */
  payloadBytes: number;
  /** The events' types, in order. */
  eventTypes: string[];
  /** Payload bytes per event, in the same order. */
  payloadBytesPerEvent: number[];
}

/** Counts of one workflow's history, as the server keeps it. */
export async function historyCounts(client: Client, workflowId: string): Promise<HistoryCounts> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const payloadBytesPerEvent = events.map(payloadBytesIn);
  return {
    events: events.length,
    workflowTasks: events.filter((e) => e.workflowTaskCompletedEventAttributes).length,
    activities: events.filter((e) => e.activityTaskScheduledEventAttributes).length,
    localActivities: events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length,
    payloadBytes: payloadBytesPerEvent.reduce((sum, n) => sum + n, 0),
    payloadBytesPerEvent,
    eventTypes: events.map((e) => String(temporal.api.enums.v1.EventType[e.eventType ?? 0]).replace('EVENT_TYPE_', '')),
  };
}

/** Sums the `data` of every payload (an object with `metadata` and `data` bytes) anywhere in `value`. */
function payloadBytesIn(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  if (value instanceof Uint8Array) return 0;
  const o = value as Record<string, unknown>;
  if (o.data instanceof Uint8Array && 'metadata' in o) return o.data.length;
  return Object.values(o).reduce<number>((sum, v) => sum + payloadBytesIn(v), 0);
}

export interface StatementCounts {
  /**
   * Every statement the role ran, BEGIN and COMMIT included, but the API's read of a key: it reads a
   * key once per 2 s whatever the number of requests (src/api/auth.ts), not once per transfer.
   */
  statements: number;
  transactions: number;
  byStatement: { query: string; calls: number }[];
}

/**
 * A superuser role of its own (the processes under measure connect as it) and pg_stat_statements in
 * `db`'s database. The server must preload the module (scripts/test-prerequisites.sh sees to it).
 */
export async function prepareStatementCounting(db: Db, role: string): Promise<void> {
  const loaded = await sql<{ setting: string }>`select setting from pg_settings where name = 'shared_preload_libraries'`.execute(db);
  if (!/pg_stat_statements/.test(loaded.rows[0]?.setting ?? '')) {
    throw new Error('PostgreSQL does not preload pg_stat_statements: run scripts/test-prerequisites.sh (it sets shared_preload_libraries and restarts the server)');
  }
  await sql`create extension if not exists pg_stat_statements`.execute(db);
  await sql.raw(`do $$ begin create role ${role} login superuser; exception when duplicate_object then null; end $$`).execute(db);
}

/** The URL `databaseUrl` names, as `role`. */
export const asRole = (databaseUrl: string, role: string) => {
  const url = new URL(databaseUrl);
  url.username = role;
  url.password = '';
  return url.toString();
};

export async function resetStatementCounts(db: Db, role: string): Promise<void> {
  await sql`select pg_stat_statements_reset((select oid from pg_roles where rolname = ${role}))`.execute(db);
}

/** What `role` ran since the last reset. */
export async function statementCounts(db: Db, role: string): Promise<StatementCounts> {
  const { rows } = await sql<{ query: string; calls: number }>`
    select s.query, s.calls::int as calls from pg_stat_statements s join pg_roles r on r.oid = s.userid
    where r.rolname = ${role} order by s.calls desc, s.query`.execute(db);
  const counted = rows.filter((r) => !/from "api_keys"/.test(r.query));
  return {
    statements: counted.reduce((sum, r) => sum + r.calls, 0),
    transactions: rows.filter((r) => /^\s*begin\b/i.test(r.query)).reduce((sum, r) => sum + r.calls, 0),
    byStatement: counted,
  };
}

export interface TransferWork {
  /** Per transfer: the statements and transactions of the processes that connect as the role. */
  statements: number;
  transactions: number;
  /** Per transfer, each distinct statement. */
  byStatement: { query: string; calls: number }[];
  /** The first measured transfer's history (the test checks that every one is alike). */
  history: HistoryCounts;
  histories: HistoryCounts[];
  /** The measured transfers. */
  transferIds: string[];
}

/**
 * Carries one transfer after another through its cycle: `create` (its id), then, once its workflow
 * waits for the deposit, `deposit`, then to its workflow's end. One first to warm the processes up,
 * then `count` counted.
 */
export async function countTransferWork(opts: {
  db: Db; role: string; client: Client; count: number; create: () => Promise<string>; deposit: (transferId: string) => Promise<void>;
}): Promise<TransferWork> {
  const transfer = async () => {
    const id = await opts.create();
    await waitForFirstWorkflowTask(opts.client, `transfer:${id}`);
    await opts.deposit(id);
    await waitForWorkflowClosed(opts.client, `transfer:${id}`);
    return id;
  };
  await transfer();
  await resetStatementCounts(opts.db, opts.role);
  const ids: string[] = [];
  for (let i = 0; i < opts.count; i++) ids.push(await transfer());
  const sqlCounts = await statementCounts(opts.db, opts.role);
  const histories = await Promise.all(ids.map((id) => historyCounts(opts.client, `transfer:${id}`)));
  return {
    statements: sqlCounts.statements / ids.length,
    transactions: sqlCounts.transactions / ids.length,
    byStatement: sqlCounts.byStatement.map((s) => ({ query: s.query.replace(/\s+/g, ' '), calls: s.calls / ids.length })),
    history: histories[0]!,
    histories,
    transferIds: ids,
  };
}

/**
 * Waits until a workflow waits for its deposit: its first task done, or (a transfer whose deposit
 * starts it, startTransferWorkflow) started with a delay, which asks for no task. A deposit that
 * comes before the first task is done is delivered with it and shortens the history: counted
 * workflows wait, as the ceiling's wait for theirs, so that each has one shape.
 */
async function waitForFirstWorkflowTask(client: Client, workflowId: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const done = async () => ((await client.workflow.getHandle(workflowId).fetchHistory()).events ?? []).some((e) => e.workflowTaskCompletedEventAttributes
    || Number(e.workflowExecutionStartedEventAttributes?.firstWorkflowTaskBackoff?.seconds ?? 0) > 0);
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${workflowId}: no workflow task done after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until a workflow has closed, without decoding its result (the bench's client has no codec). */
async function waitForWorkflowClosed(client: Client, workflowId: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await client.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING') {
    if (Date.now() > deadline) throw new Error(`${workflowId} still running after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
