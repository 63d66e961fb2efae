import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import {
  API_PORTS, TEMPORAL_CONFIG_ENV, TEMPORAL_FRONTEND_PORT, TEMPORAL_SERVER_VERSION, TEMPORAL_SERVICES, TEMPORAL_UI_PORT,
  TEMPORAL_UI_VERSION, WORKER_COUNT, WORKER_METRICS_PORTS,
} from '../../src/cluster/layout';
import { platformEnv } from '../../src/cluster/platform-env';
import { clusterOptions } from '../../src/cluster/options';
import { temporalServiceEnv } from '../../src/cluster/temporal-cluster';

// docker-compose.yml and `npm run stack:cluster` describe one production layout; neither may drift
// from the other (versions, ports, configuration files, settings).

const root = path.join(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, any>; 'x-app-env': Record<string, string> };
const services = compose.services;
const tag = (version: string) => version.replace(/^v/, '');
const envNames = (template: string) => new Set([...template.matchAll(/env "([A-Z_]+)"/g)].map((m) => m[1]));
const published = (service: any) => (service.ports ?? []).map((p: string) => Number(p.split(':')[0]));

test('the same releases: compose images, the install script and the layout', () => {
  const script = read('scripts/install-temporal-server.sh');
  expect(script).toContain(`SERVER_VERSION=${TEMPORAL_SERVER_VERSION}`);
  expect(script).toContain(`UI_VERSION=${TEMPORAL_UI_VERSION}`);
  for (const s of TEMPORAL_SERVICES) expect(services[`temporal-${s.name}`].image).toBe(`temporalio/server:${tag(TEMPORAL_SERVER_VERSION)}`);
  expect(services['temporal-schema'].image).toBe(`temporalio/admin-tools:${tag(TEMPORAL_SERVER_VERSION)}`);
  expect(services['temporal-ui'].image).toBe(`temporalio/ui:${tag(TEMPORAL_UI_VERSION)}`);
});

test('every Temporal service runs from deploy/temporal/cluster.yaml, with the ports the layout gives it', () => {
  const config = read('deploy/temporal/cluster.yaml');
  for (const s of TEMPORAL_SERVICES) {
    const service = services[`temporal-${s.name}`];
    expect(service.command).toEqual([s.name]);
    expect(service.volumes).toEqual(['./deploy/temporal:/etc/temporal/platform:ro']);
    expect(service.entrypoint.join(' ')).toContain(`--config etc/temporal/platform --env ${TEMPORAL_CONFIG_ENV} --allow-no-auth start --service`);
    expect(service.environment.TEMPORAL_METRICS_ADDRESS).toBe(`0.0.0.0:${s.metricsPort}`);
    expect(service.environment.TEMPORAL_DYNAMIC_CONFIG).toBe('/etc/temporal/platform/dynamicconfig.yaml');
    // The template's ports, before the offset a second cluster on one machine adds.
    const block = config.slice(config.indexOf(`  ${s.name}:\n`));
    expect(block).toMatch(new RegExp(`grpcPort: \\{\\{ add ${s.grpcPort} \\$offset \\}\\}`));
    expect(block).toMatch(new RegExp(`membershipPort: \\{\\{ add ${s.membershipPort} \\$offset \\}\\}`));
  }
  expect(published(services['temporal-frontend'])).toEqual([TEMPORAL_FRONTEND_PORT]);
});

test('the settings compose and the script give the server are ones its configuration reads, and the script gives them all', () => {
  const read_ = envNames(read('deploy/temporal/cluster.yaml'));
  const composeNames = Object.keys(services['temporal-history'].environment);
  const scriptNames = Object.keys(temporalServiceEnv({
    db: { host: 'h', port: 1, user: 'u', password: '', name: 'n', visibilityName: 'v' }, namespace: 'default', portOffset: 0, dir: '/tmp', codecEndpoint: '',
  }, 9091)).filter((k) => k !== 'PATH');
  for (const name of [...composeNames, ...scriptNames]) expect(read_).toContain(name);
  // What only the container needs: its own address and binding (the script runs on 127.0.0.1).
  const containerOnly = ['TEMPORAL_BIND_ON_IP', 'TEMPORAL_FRONTEND_ADDRESS'];
  expect(composeNames.filter((n) => !scriptNames.includes(n)).sort()).toEqual(containerOnly.sort());
  expect(services['temporal-history'].entrypoint.join(' ')).toContain('TEMPORAL_BROADCAST_ADDRESS=');
});

test('the schemas, the namespace and the search attributes are set up the same way', () => {
  const schemaJob = services['temporal-schema'].command.join(' ');
  for (const step of ['create-database', 'setup-schema -v 0.0', 'update-schema --schema-name postgresql/v12/$$schema']) expect(schemaJob).toContain(step);
  expect(schemaJob).toContain('temporal:temporal temporal_visibility:visibility');
  const script = read('src/cluster/temporal-cluster.ts');
  expect(script).toContain("[[db.name, 'temporal'], [db.visibilityName, 'visibility']]");
  expect(script).toContain('`postgresql/v12/${schema}`');
  // Both register them with the project's own code (src/temporal/namespace-setup.ts).
  expect(services['temporal-setup'].command).toEqual(['npm', 'run', 'cli', '--', 'temporal', 'setup']);
  expect(script).toContain('await setUpNamespace(');
});

test('the Web UI runs from deploy/temporal-ui/cluster.yaml on the same port, decoding through the first API', () => {
  const ui = services['temporal-ui'];
  expect(ui.volumes).toEqual(['./deploy/temporal-ui:/etc/temporal-ui:ro']);
  expect(ui.entrypoint).toEqual(['./ui-server', '--root', '/', '--config', 'etc/temporal-ui', '--env', TEMPORAL_CONFIG_ENV, 'start']);
  expect(published(ui)).toEqual([TEMPORAL_UI_PORT]);
  expect(ui.environment.TEMPORAL_UI_PORT).toBe(String(TEMPORAL_UI_PORT));
  expect(ui.environment.TEMPORAL_UI_CODEC_ENDPOINT).toBe(`http://localhost:${API_PORTS[0]}/codec`);
  const read_ = envNames(read('deploy/temporal-ui/cluster.yaml'));
  for (const name of Object.keys(ui.environment)) expect(read_).toContain(name);
});

test('two API and two worker processes of the production entry points, restarted when they die, with the same settings', () => {
  const apis = Object.keys(services).filter((n) => /^api-\d$/.test(n)).map((n) => services[n]);
  const workers = Object.keys(services).filter((n) => /^worker-\d$/.test(n)).map((n) => services[n]);
  expect(apis.map((s) => published(s)[0])).toEqual(API_PORTS);
  expect(apis.map((s) => s.environment.PORT)).toEqual(API_PORTS.map(String));
  expect(workers).toHaveLength(WORKER_COUNT);
  expect(workers.map((s) => s.environment.TEMPORAL_METRICS_ADDRESS)).toEqual(WORKER_METRICS_PORTS.map((p) => `0.0.0.0:${p}`));
  for (const s of [...apis, ...workers]) expect(s.restart).toBe('unless-stopped');
  expect(apis.every((s) => s.command.join(' ') === 'npm run start:api')).toBe(true);
  expect(workers.every((s) => s.command.join(' ') === 'npm run start:worker')).toBe(true);
  const pkg = JSON.parse(read('package.json'));
  expect([pkg.scripts['start:api'], pkg.scripts['start:worker']]).toEqual(['exec node --import tsx src/main/api.ts', 'exec node --import tsx workers/main.ts']);
  const script = read('src/main/cluster.ts');
  expect(script).toContain("'src/main/api.ts'");
  expect(script).toContain("'workers/main.ts'");

  // What the script sets for them is what compose's shared environment sets (its DATA_DIR holds the
  // lists the image keeps in SANCTIONS_DATA_DIR; the rest of compose's are optional there).
  const set = Object.keys(platformEnv(clusterOptions({}, '/tmp/x'), { temporalAddress: 'a:1', evmRpcUrls: '', solanaRpcUrl: 'http://127.0.0.1:8899', bitcoinRpcUrl: 'http://u:p@127.0.0.1:18443', publicBaseUrl: 'http://x' }))
    .filter((k) => !(k in process.env) || ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'REDIS_URL', 'DATA_ENCRYPTION_KEY', 'WALLET_KEK', 'PUBLIC_BASE_URL', 'EVM_RPC_URLS'].includes(k));
  expect(set.filter((k) => k !== 'DATA_DIR' && !(k in compose['x-app-env']))).toEqual([]);
});
