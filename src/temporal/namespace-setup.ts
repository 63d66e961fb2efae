import { Connection } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { msToTs } from '@temporalio/common/lib/time';
import { ALL_SEARCH_ATTRIBUTES } from './search-attributes';

/** temporal.api.enums.v1.IndexedValueType, by the names search attribute types have in metadata. */
const INDEXED_VALUE_TYPE: Record<string, number> = { Text: 1, Keyword: 2, Int: 3, Double: 4, Bool: 5, Datetime: 6, KeywordList: 7 };
const ALREADY_EXISTS = 6;

/**
 * What a Temporal cluster needs before the platform runs on it: the namespace (a new cluster has
 * none but the system's) and the custom search attributes operators filter on. Idempotent: run at
 * every start of the cluster stack and by `npm run cli -- temporal setup` (docker-compose.yml).
 * `waitMs`: how long to wait for a cluster that is still starting.
 */
export async function setUpNamespace(address: string, namespace: string, opts: { retentionDays?: number; waitMs?: number } = {}) {
  const connection = await retryFor(opts.waitMs ?? 0, () => connectToServingFrontend(address));
  try {
    const exists = await connection.workflowService.describeNamespace({ namespace }).then(() => true, () => false);
    if (!exists) {
      await connection.workflowService.registerNamespace({
        namespace, workflowExecutionRetentionPeriod: msToTs(`${opts.retentionDays ?? 30} days`),
      }).catch((err: { code?: number }) => {
        if (err.code !== ALREADY_EXISTS) throw err; // a setup running at the same time
      });
    }
    // The services learn of a new namespace, and of its search attributes, from their namespace
    // cache, refreshed every few seconds: until then calls naming them are refused.
    const added = await retryFor(30_000, () => registerMissingSearchAttributes(connection, namespace));
    if (!exists || added) await retryFor(60_000, () => queryEverySearchAttribute(connection, namespace));
  } finally {
    await connection.close();
  }
}

/**
 * Registers the search attributes the namespace lacks: a cluster created by an earlier release (or
 * the dev server's database kept from one) gets the ones added since. Whether it added any.
 */
export async function registerMissingSearchAttributes(connection: Connection, namespace: string): Promise<boolean> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = ALL_SEARCH_ATTRIBUTES.filter((a) => !(a.name in (customAttributes ?? {})));
  if (missing.length === 0) return false;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((a) => [a.name, INDEXED_VALUE_TYPE[TypedSearchAttributes.toMetadataType(a.type)]])),
  });
  return true;
}

/**
 * Waits until a Temporal frontend that is starting answers for `namespace`. `stoppedReason` says why
 * the server can no longer come up (it exited), which fails the wait at once with those words.
 */
export async function waitUntilFrontendServes(address: string, namespace: string, opts: {
  timeoutMs: number; intervalMs: number; what: string; stoppedReason: () => string | undefined;
}) {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const stopped = opts.stoppedReason();
    if (stopped !== undefined) throw new Error(stopped);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${opts.what} did not answer at ${address}: ${String(err)}`);
      await new Promise((r) => setTimeout(r, opts.intervalMs));
    }
  }
}

async function connectToServingFrontend(address: string): Promise<Connection> {
  const connection = await Connection.connect({ address, connectTimeout: 2000 });
  try {
    await connection.workflowService.describeNamespace({ namespace: 'temporal-system' });
    return connection;
  } catch (err) {
    await connection.close();
    throw err;
  }
}

async function queryEverySearchAttribute(connection: Connection, namespace: string) {
  const query = ALL_SEARCH_ATTRIBUTES.map((a) => `${a.name} = 'setup-probe'`).join(' AND ');
  await connection.workflowService.countWorkflowExecutions({ namespace, query });
}

async function retryFor<T>(timeoutMs: number, attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (Date.now() >= deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
