import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../harness/stack';

// The embedded database (`npm start`) serves every connection of the API, the worker and the CLI
// from PGlite's one session: many connections at once, each with its own queries in flight, must get
// their own answers, and a transaction must see only its own writes until it commits.

let dataDir: string;
let server: ChildProcess;
let url: string;
let pool: pg.Pool;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fp-pglite-'));
  const port = await freePort();
  server = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '../fixtures/embedded-postgres-process.ts')], {
    env: { ...process.env, DATA_DIR: dataDir, PGLITE_PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    server.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const ready = /ready (\S+)/.exec(out);
      if (ready) resolve(ready[1]!);
    });
    server.once('exit', (code) => reject(new Error(`the embedded database exited (${code}): ${out}`)));
  });
  pool = new pg.Pool({ connectionString: url, max: 8 });
  await pool.query('create table counters (id int primary key, n int not null)');
  await pool.query('insert into counters values (1, 0)');
});

afterAll(async () => {
  await pool.end();
  const exited = new Promise((r) => server.once('exit', r));
  server.kill('SIGTERM');
  await exited;
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('queries of different shapes on eight connections at once each get their own answer', async () => {
  // Two shapes with a different number of parameters: a cycle run against the other's statement fails or answers wrongly.
  const answers = await Promise.all(Array.from({ length: 400 }, async (_, i) => {
    if (i % 2 === 0) return (await pool.query('select $1::int + 1 as n', [i])).rows[0].n === i + 1;
    const { rows } = await pool.query('select $1::text || $2::text as s, $3::int as k', ['a', String(i), i]);
    return rows[0].s === `a${i}` && rows[0].k === i;
  }));
  expect(answers.filter((ok) => !ok)).toHaveLength(0);
});

test('a transaction holds the session: increments under row locks add up while other connections read', async () => {
  const increments = Array.from({ length: 40 }, async () => {
    const client = await pool.connect();
    try {
      await client.query('begin');
      const { rows } = await client.query('select n from counters where id = $1 for update', [1]);
      await client.query('update counters set n = $1 where id = $2', [rows[0].n + 1, 1]);
      await client.query('commit');
    } finally {
      client.release();
    }
  });
  const reads = Array.from({ length: 40 }, async () => (await pool.query('select count(*)::int as c from counters where id = $1', [1])).rows[0].c);
  const [, counts] = await Promise.all([Promise.all(increments), Promise.all(reads)]);
  expect(counts.every((c) => c === 1)).toBe(true);
  expect((await pool.query('select n from counters where id = 1')).rows[0].n).toBe(40);
});

test('a connection that goes away mid-transaction gives the session back, its writes undone', async () => {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined); // its own connection cut, below
  await client.connect();
  await client.query('begin');
  await client.query('update counters set n = -1 where id = 1');
  // Gone without a commit (a crashed process): the socket closes under the open transaction.
  (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  const { rows } = await pool.query('select n from counters where id = $1', [1]);
  expect(rows[0].n).toBe(40);
});
