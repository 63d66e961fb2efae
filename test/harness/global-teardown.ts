import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import type { StackInfo } from './stack-file';

export default async function globalTeardown() {
  const stack = (globalThis as any).__STACK__ as { temporal: { teardown(): Promise<void> }; processes: ChildProcess[]; info: StackInfo } | undefined;
  if (!stack) return;
  await Promise.all(
    stack.processes.map(
      (p) =>
        new Promise<void>((resolve) => {
          if (p.exitCode !== null || p.signalCode !== null) return resolve();
          p.once('exit', () => resolve());
          p.kill('SIGTERM');
          setTimeout(() => p.kill('SIGKILL'), 10_000).unref();
        }),
    ),
  );
  await stack.temporal.teardown();
  const info = stack.info;
  if (!process.env.KEEP_TEST_DATABASE) {
    const adminUrl = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${new URL(info.databaseUrl).pathname.slice(1)} with (force)`);
    await admin.end();
  }
}
