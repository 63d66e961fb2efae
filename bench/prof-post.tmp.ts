import autocannon from 'autocannon';
import { createUnlimitedKey, startStack } from '../test/harness/stack';
import { cpuShares, cpuSnapshot } from './cpu';
(async () => {
  const stack = await startStack({ name: 'profpost', logDir: '/tmp/prof/logs', extraEnv: { LOG_LEVEL: 'warn' } });
  try {
    const key = await createUnlimitedKey(stack.info.databaseUrl);
    const headers = { 'Api-Key': key, 'Content-Type': 'application/json' };
    const body = JSON.stringify({ type: 'individual', email: 'bench@example.com', first_name: 'Bench', last_name: 'Mark', phone: '+14155550123',
      date_of_birth: '1990-04-12', address: { line1: '1 Market St', city: 'San Francisco', postal_code: '94105', country: 'US' } });
    const kinds = { API: /src\/main\/api\.ts/, worker: /workers\/main\.ts/, PostgreSQL: /^postgres/, bench: /prof-post/, redis: /redis/, temporal: /temporal server/ };
    await autocannon({ url: `${stack.info.apiUrl}/v0/customers`, method: 'POST', headers, body, connections: 16, duration: 3 });
    for (const [name, opts] of [['POST', { url: `${stack.info.apiUrl}/v0/customers`, method: 'POST' as const, headers, body }]] as const) {
      const before = cpuSnapshot();
      const r = await autocannon({ ...opts, connections: 16, duration: 10 });
      console.log(name, 'rps', r.requests.average, 'p99', r.latency.p99, cpuShares(before, cpuSnapshot(), kinds));
    }
    const c = (await (await fetch(`${stack.info.apiUrl}/v0/customers`, { method: 'POST', headers, body })).json()) as { id: string };
    const before = cpuSnapshot();
    const r = await autocannon({ url: `${stack.info.apiUrl}/v0/customers/${c.id}`, headers, connections: 16, duration: 10 });
    console.log('GET rps', r.requests.average, cpuShares(before, cpuSnapshot(), kinds));
  } finally { await stack.stop(); }
})();
