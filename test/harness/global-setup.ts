import path from 'node:path';
import { startStack } from './stack';
import { STACK_ENV } from './stack-file';

/**
 * Starts the real stack once per test run; tests reach it over HTTP (see ./stack.ts). The e2e-alone
 * project gets a stack of its own (its logs in test-logs/alone), so that `npm test` runs it beside
 * the other projects: its files are alone on their stack, whose database, chains and bank no other
 * file reaches.
 */
export default async function globalSetup(_globalConfig: unknown, projectConfig?: { displayName?: { name?: string } }) {
  const alone = projectConfig?.displayName?.name === 'e2e-alone';
  // Its own ports too (jest's workers inherit them): see freePortRange.
  if (alone) process.env.TEST_PORTS_FROM ??= '10000';
  // The stack's API and worker, and jest's workers, yield the CPU to Temporal, PostgreSQL and the
  // chain nodes (yieldToServices in ./stack.ts). Workers read it from the environment they inherit.
  process.env.TEST_NICENESS ??= '5';
  const stack = await startStack({
    name: alone ? 'alone' : 'test',
    logDir: path.join(__dirname, '../../test-logs', ...alone ? ['alone'] : []),
    // A worker a test kills hands its workflows on after 3 s, not the default 10 s.
    extraEnv: { WORKER_STICKY_QUEUE_TIMEOUT_SECONDS: '3' },
    bank: true,
  });
  process.env[STACK_ENV] = JSON.stringify(stack.info);
  (globalThis as any).__STACK__ = stack;
}
