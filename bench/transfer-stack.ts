import path from 'node:path';
import { createDb, type Db } from '../src/db';
import { apiClient, type ApiClient } from '../test/harness';
import { STACK_ENV } from '../test/harness/stack-file';
import { createUnlimitedKey, startStack } from '../test/harness/stack';
import { approvedCustomer } from '../test/harness/transfers';

/**
 * The benches that carry transfers end to end: the test harness's stack (API and worker processes,
 * PostgreSQL, Temporal, the local chains) with limits and clocks out of the way, a key without rate
 * limits and an approved US customer; stopped after `run`, however it ends.
 */
export async function withTransferStack<T>(
  name: string, run: (bench: { db: Db; api: ApiClient; customerId: string; processEnv: Record<string, string | undefined> }) => Promise<T>,
): Promise<T> {
  const stack = await startStack({
    name: name.replace(/-/g, ''), logDir: path.join(__dirname, `../test-logs/${name}`),
    extraEnv: { LOG_LEVEL: 'warn', TRANSFER_DAILY_LIMIT_USD: '1000000000', SANDBOX_TIME_SCALE: '1000000' },
  });
  process.env[STACK_ENV] = JSON.stringify(stack.info);
  const db = createDb(stack.info.databaseUrl, 2);
  try {
    const api = apiClient(await createUnlimitedKey(stack.info.databaseUrl));
    const customer = await approvedCustomer(api, 'US');
    return await run({ db, api, customerId: customer.id, processEnv: stack.info.processEnv });
  } finally {
    await db.destroy();
    await stack.stop();
  }
}
