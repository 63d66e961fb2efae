import path from 'node:path';
import { startStack } from './stack';
import { STACK_ENV } from './stack-file';

/** Starts the real stack once per test run; tests reach it over HTTP (see ./stack.ts). */
export default async function globalSetup() {
  const stack = await startStack({ name: 'test', logDir: path.join(__dirname, '../../test-logs') });
  process.env[STACK_ENV] = JSON.stringify(stack.info);
  (globalThis as any).__STACK__ = stack;
}
