import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { resolveTemporalCli } from '../../src/embedded/temporal-cli';
import { ALL_SEARCH_ATTRIBUTES } from '../../src/temporal/search-attributes';
import { STACK_ENV, type StackInfo } from './stack-file';

/**
 * Starts the real parts once per test run: the Temporal CLI dev server (pinned version), a fresh
 * PostgreSQL database, and the production API and worker processes (`src/main/api.ts`,
 * `workers/main.ts`). Tests talk to them over HTTP only.
 */
export default async function globalSetup() {
  const root = path.join(__dirname, '../..');
  const logDir = path.join(root, 'test-logs');
  fs.mkdirSync(logDir, { recursive: true });

  const cli = resolveTemporalCli();
  if (!cli) throw new Error('Temporal CLI not found: run `npm run temporal:install` (needs Go) or set TEMPORAL_CLI_PATH');
  const temporalPort = await freePort();
  const temporal = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: cli },
      ip: '127.0.0.1',
      port: temporalPort,
      namespace: 'default',
      searchAttributes: ALL_SEARCH_ATTRIBUTES,
      extraArgs: ['--log-level', 'error'],
    },
  });

  const adminUrl = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = `fp_test_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin.query(`create database ${dbName}`);
  await admin.end();
  const databaseUrl = adminUrl.replace(/\/[^/]*$/, `/${dbName}`);

  const apiPort = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: `test-${process.pid}`,
    DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    PUBLIC_BASE_URL: `http://127.0.0.1:${apiPort}`,
    LOG_LEVEL: 'info',
    DATA_DIR: path.join(logDir, 'data'),
  };
  const worker = startProcess('worker', path.join(root, 'workers/main.ts'), env, logDir);
  const api = startProcess('api', path.join(root, 'src/main/api.ts'), { ...env, PORT: String(apiPort) }, logDir);
  await waitUntilReady(`http://127.0.0.1:${apiPort}/readyz`, api, 60_000);
  await waitForLog(path.join(logDir, 'worker.log'), 'worker started', worker, 60_000);

  const info: StackInfo = {
    apiUrl: `http://127.0.0.1:${apiPort}`,
    databaseUrl,
    temporalAddress: `127.0.0.1:${temporalPort}`,
    namespace: 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE,
    encryptionKey: env.DATA_ENCRYPTION_KEY,
    redisUrl: env.REDIS_URL,
    processEnv: env as Record<string, string>,
    logDir,
  };
  process.env[STACK_ENV] = JSON.stringify(info);
  (globalThis as any).__STACK__ = { temporal, processes: [api, worker], info };
}

export function startProcess(name: string, entry: string, env: NodeJS.ProcessEnv, logDir: string): ChildProcess {
  const out = fs.openSync(path.join(logDir, `${name}.log`), 'w');
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { env, stdio: ['ignore', out, out] });
  child.on('exit', (code, signal) => {
    if (code !== 0 && signal === null) process.stderr.write(`test stack: ${name} exited with ${code}; see test-logs/${name}.log\n`);
  });
  return child;
}

export async function waitUntilReady(url: string, child: ChildProcess, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`process exited (${child.exitCode}) before ${url} was ready`);
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms`);
}

export async function waitForLog(file: string, text: string, child: ChildProcess, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`process exited (${child.exitCode}); see ${file}`);
    if (fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes(text)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`'${text}' did not appear in ${file} within ${timeoutMs} ms`);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}
