// `npm run bench:screening`: quality and speed of sanctions screening on the real lists in
// the repository (bench/reference-lists.ts). In process: recall, false positives, top-match precision, latency,
// memory. Through the whole stack: one screening over HTTP, and a 10,000-entity batch.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config';
import { SanctionsMatcher } from '../src/sanctions/matcher';
import { pastDate } from '../src/domain/validation';
import { createUnlimitedKey, startStack } from '../test/harness/stack';
import { DISTORTIONS, buildPositives, negativeQueries } from './screening-eval';
import { loadNegatives, loadReferenceEntities } from './reference-lists';

const POSITIVES = Number(process.env.BENCH_POSITIVES ?? 5000);
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
const ms = (v: number) => v.toFixed(3);

async function inProcess() {
  const threshold = loadConfig({}).SANCTIONS_MATCH_THRESHOLD;
  const heapBefore = process.memoryUsage().heapUsed;
  let t = performance.now();
  const entities = await loadReferenceEntities();
  const parseMs = performance.now() - t;
  t = performance.now();
  const matcher = new SanctionsMatcher(entities, { threshold, maxMatches: 10 });
  const indexMs = performance.now() - t;
  global.gc?.();
  const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;

  const positives = buildPositives(entities, POSITIVES, 42);
  const negatives = negativeQueries(loadNegatives());
  for (const q of negatives.slice(0, 2000)) matcher.screen(q); // warm-up

  const latencies: number[] = [];
  const byDistortion = new Map<string, { n: number; found: number }>();
  let found = 0;
  let topCorrect = 0;
  for (const p of positives) {
    const s = performance.now();
    const r = matcher.screen(p.query);
    latencies.push(performance.now() - s);
    const d = byDistortion.get(p.distortion) ?? { n: 0, found: 0 };
    d.n++;
    const hit = r.find((m) => m.entity.id === p.expectedEntityId);
    if (hit) {
      found++;
      d.found++;
      // Ties with the expected listing count as correct: same score, same evidence.
      if (r[0].entity.id === p.expectedEntityId || r[0].score === hit.score) topCorrect++;
    }
    byDistortion.set(p.distortion, d);
  }
  let falsePositives = 0;
  for (const q of negatives) {
    const s = performance.now();
    if (matcher.screen(q).length > 0) falsePositives++;
    latencies.push(performance.now() - s);
  }
  latencies.sort((a, b) => a - b);
  return {
    threshold,
    entities: entities.length,
    names: matcher.nameCount,
    parseMs,
    indexMs,
    heapMb,
    positives: positives.length,
    negatives: negatives.length,
    recall: found / positives.length,
    fpPer1000: (falsePositives / negatives.length) * 1000,
    topPrecision: topCorrect / found,
    p50: pct(latencies, 0.5),
    p99: pct(latencies, 0.99),
    byDistortion: DISTORTIONS.map((d) => ({ d, ...(byDistortion.get(d) ?? { n: 0, found: 0 }) })),
    queries: latencies.length,
  };
}

function rssMb(pid: number | undefined) {
  if (!pid) return NaN;
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

async function throughStack() {
  const stack = await startStack({ name: 'benchscr', logDir: path.join(__dirname, '../test-logs/bench-screening'), extraEnv: { LOG_LEVEL: 'warn' } });
  try {
    const key = await createUnlimitedKey(stack.info.databaseUrl);
    const headers = { 'Api-Key': key, 'Content-Type': 'application/json' };
    const negatives = loadNegatives();

    const progress = (line: string) => process.stderr.write(`bench:screening: ${line}\n`);
    progress('stack ready; screening over HTTP');
    const http: number[] = [];
    for (let i = 0; i < 2200; i++) {
      const n = negatives[i % negatives.length];
      const body = JSON.stringify({ name: n.name, type: 'individual', date_of_birth: n.dateOfBirth });
      const s = performance.now();
      const res = await fetch(`${stack.info.apiUrl}/v0/sanctions/screen`, { method: 'POST', headers, body });
      await res.arrayBuffer();
      if (i >= 200) http.push(performance.now() - s); // first 200: warm-up
      if (res.status !== 200) throw new Error(`screen answered ${res.status}`);
    }
    http.sort((a, b) => a - b);

    progress(`HTTP done (p50 ${ms(pct(http, 0.5))} ms); batch of 10,000`);
    // The synthetic file has a few impossible birth dates, which the API rightly refuses: leave those out.
    const entities = negatives
      .slice(10_000)
      .filter((n) => pastDate.safeParse(n.dateOfBirth).success)
      .slice(0, 10_000)
      .map((n) => ({ name: n.name, type: 'individual', date_of_birth: n.dateOfBirth }));
    const s = performance.now();
    const created = await fetch(`${stack.info.apiUrl}/v0/sanctions/screen/batch`, { method: 'POST', headers, body: JSON.stringify({ entities }) });
    const batch = (await created.json()) as { id: string };
    if (created.status !== 202) throw new Error(`batch answered ${created.status}: ${JSON.stringify(batch)}`);
    let status = 'processing';
    let workerRss = 0;
    while (status !== 'completed') {
      await new Promise((r) => setTimeout(r, 100));
      workerRss = Math.max(workerRss, rssMb(stack.processes.worker.pid));
      status = ((await (await fetch(`${stack.info.apiUrl}/v0/sanctions/screen/batch/${batch.id}?limit=1`, { headers })).json()) as { status: string }).status;
    }
    const batchSeconds = (performance.now() - s) / 1000;
    return { httpP50: pct(http, 0.5), httpP99: pct(http, 0.99), httpN: http.length, batchSeconds, workerRss, apiRss: rssMb(stack.processes.api.pid) };
  } finally {
    await stack.stop();
  }
}

async function main() {
  const a = await inProcess();
  process.stderr.write(`bench:screening: in-process done (recall ${a.recall.toFixed(4)})\n`);
  const b = await throughStack();
  console.log(`\n${new Date().toISOString().slice(0, 10)} — ${os.cpus().length} cores (${os.cpus()[0]?.model}), Node ${process.version}; ${a.entities} listed entities, ${a.names} names, 6 sources`);
  console.log(`\n| measure | value |\n|---|---|`);
  console.log(`| threshold (default) | ${a.threshold} |`);
  console.log(`| recall (${a.positives} distorted listed names) | ${a.recall.toFixed(4)} |`);
  console.log(`| false positives per 1,000 clean names (${a.negatives}) | ${a.fpPer1000.toFixed(2)} |`);
  console.log(`| precision of the top match | ${a.topPrecision.toFixed(4)} |`);
  console.log(`| in-process latency p50 / p99 (${a.queries} screenings) | ${ms(a.p50)} ms / ${ms(a.p99)} ms |`);
  console.log(`| HTTP latency p50 / p99 (POST /v0/sanctions/screen, 1 connection, ${b.httpN} requests) | ${ms(b.httpP50)} ms / ${ms(b.httpP99)} ms |`);
  console.log(`| 10,000-entity batch through the API, POST to completed | ${b.batchSeconds.toFixed(2)} s |`);
  console.log(`| parse lists / build index | ${Math.round(a.parseMs)} ms / ${Math.round(a.indexMs)} ms |`);
  console.log(`| index heap (in process) | ${Math.round(a.heapMb)} MB |`);
  console.log(`| worker RSS during the batch / API RSS | ${Math.round(b.workerRss)} MB / ${Math.round(b.apiRss)} MB |`);
  console.log(`\n| distortion | positives | recall |\n|---|---|---|`);
  for (const d of a.byDistortion) console.log(`| ${d.d} | ${d.n} | ${(d.found / Math.max(1, d.n)).toFixed(4)} |`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
