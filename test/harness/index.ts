import { spawnSync } from 'node:child_process';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { Client, Connection } from '@temporalio/client';
import { createApiKey, createDeveloper } from '../../src/admin/accounts';
import type { Permission } from '../../src/api/context';
import { createDb, type Db } from '../../src/db';
import { DataCipher } from '../../src/crypto';
import { encryptedDataConverter } from '../../src/temporal/payload-codec';
import { STACK_ENV, type StackInfo } from './stack-file';

export function stack(): StackInfo {
  const raw = process.env[STACK_ENV];
  if (!raw) throw new Error('the test stack is not running (jest globalSetup)');
  return JSON.parse(raw);
}

/** The stack's data converter: payloads encrypted under its DATA_ENCRYPTION_KEY, as its API and workers encrypt them. */
export function stackDataConverter() {
  return encryptedDataConverter(new DataCipher(Buffer.from(stack().processEnv.DATA_ENCRYPTION_KEY!, 'base64')));
}

/** The workflow code the stack's workers run (bundled once at its start), with their data converter: what a replay checks. */
export function workflowBundle() {
  return { workflowBundle: { codePath: stack().processEnv.WORKFLOW_BUNDLE_PATH! }, dataConverter: stackDataConverter() };
}

let sharedDb: Db | undefined;
/** Direct database access for setup (developer accounts, keys) and for checking what is stored. */
export function testDb(): Db {
  sharedDb ??= createDb(stack().databaseUrl, 4);
  return sharedDb;
}

let sharedTemporal: Client | undefined;
export async function temporalClient(): Promise<Client> {
  if (!sharedTemporal) {
    const connection = await Connection.connect({ address: stack().temporalAddress });
    sharedTemporal = new Client({ connection, namespace: stack().namespace, dataConverter: stackDataConverter() });
  }
  return sharedTemporal;
}

// Benches use these helpers outside jest, where there is no afterAll.
if (typeof afterAll === 'function') afterAll(async () => {
  await sharedDb?.destroy();
  sharedDb = undefined;
  await sharedTemporal?.connection.close();
  sharedTemporal = undefined;
});

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** Checks every /v0 response against the OpenAPI document the API publishes. */
class OpenApiChecker {
  private ajv = new Ajv2020({ strict: false, allErrors: true });
  private routes: { method: string; regex: RegExp; template: string; op: any }[] = [];
  private compiled = new Map<string, ValidateFunction>();
  private sharedResponses: Record<string, any>;

  constructor(doc: any) {
    addFormats(this.ajv);
    const rewrite = (o: unknown) => JSON.parse(JSON.stringify(o).replaceAll('"#/components/schemas/', '"components#/$defs/'));
    this.sharedResponses = rewrite(doc.components.responses ?? {});
    this.ajv.addSchema({ $id: 'components', $defs: rewrite(doc.components.schemas) });
    for (const [template, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        this.routes.push({
          method: method.toUpperCase(),
          template,
          regex: new RegExp('^' + template.replace(/\{\w+\}/g, '[^/]+') + '$'),
          op: rewrite(op),
        });
      }
    }
  }

  check(method: string, path: string, status: number, body: unknown) {
    const route = this.routes.find((r) => r.method === method && r.regex.test(path));
    const key = route ? `${route.method} ${route.template} ${status}` : `error ${status}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      let response = route?.op.responses[String(status)] ?? route?.op.responses.default;
      // Error answers are shared: '#/components/responses/404'.
      if (response?.$ref) response = this.sharedResponses[response.$ref.split('/').pop()];
      const schema = response?.content['application/json'].schema ?? { $ref: 'components#/$defs/Error' };
      validate = this.ajv.compile(schema);
      this.compiled.set(key, validate);
    }
    if (!validate(body)) {
      throw new Error(
        `${method} ${path} → ${status}: response does not match the OpenAPI document: ${this.ajv.errorsText(validate.errors)}\n` +
          JSON.stringify(body).slice(0, 2000),
      );
    }
  }
}

let checker: Promise<OpenApiChecker> | undefined;
function openApi() {
  checker ??= fetch(`${stack().apiUrl}/v0/openapi.json`).then(async (r) => new OpenApiChecker(await r.json()));
  return checker;
}

export interface RequestOptions {
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  idempotencyKey?: string;
}

/**
 * An HTTP client for one API key, to the stack's API or to another API process at `baseUrl`. Every /v0
 * response is checked against the OpenAPI document. `waitOutRateLimits`: a 429 is sent again after its
 * Retry-After, as a well-behaved client does (for keys with the default plan's low limit).
 */
export function apiClient(key?: string, baseUrl?: string, clientOpts: { waitOutRateLimits?: boolean } = {}) {
  const request = async <T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> => {
    for (let attempt = 1; ; attempt++) {
      const res = await requestOnce<T>(method, path, opts).catch((err: Error & { cause?: { code?: string } }) => {
        // A pooled keep-alive connection the API closed while this process was blocked (a spawnSync of
        // the CLI) fails at once, before the request was read: a read is simply sent again, once.
        if (method !== 'GET' || attempt > 1 || err.cause?.code !== 'UND_ERR_SOCKET') throw err;
        return undefined;
      });
      if (!res) continue;
      if (res.status !== 429 || !clientOpts.waitOutRateLimits || attempt >= 5) return res;
      await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
    }
  };
  const requestOnce = async <T = any>(method: string, path: string, opts: RequestOptions): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...(key ? { 'Api-Key': key } : {}), ...opts.headers };
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['Content-Type'] ??= 'application/json';
    }
    if (opts.idempotencyKey) headers['Idempotency-Key'] = opts.idempotencyKey;
    const res = await fetch(`${baseUrl ?? stack().apiUrl}${path}`, { method, headers, body });
    const text = await res.text();
    const parsed = text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
    const pathname = path.split('?')[0];
    // Under jest every answer is checked against the API's contract; a bench measures without.
    if (typeof expect === 'function' && pathname.startsWith('/v0/') && pathname !== '/v0/openapi.json') {
      expect(res.headers.get('request-id')).toMatch(/^req_[0-9A-Za-z]{20,}$/);
      (await openApi()).check(method, pathname, res.status, parsed);
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  };
  return {
    request,
    get: <T = any>(path: string, opts?: RequestOptions) => request<T>('GET', path, opts),
    post: <T = any>(path: string, body?: unknown, opts: RequestOptions = {}) => request<T>('POST', path, { ...opts, body }),
    patch: <T = any>(path: string, body?: unknown, opts: RequestOptions = {}) => request<T>('PATCH', path, { ...opts, body }),
    delete: <T = any>(path: string, opts?: RequestOptions) => request<T>('DELETE', path, opts),
  };
}
export type ApiClient = ReturnType<typeof apiClient>;

export interface Tenant {
  developerId: string;
  /** Unrestricted sandbox secret key with a high rate limit, so tests do not trip it by accident. */
  secret: string;
  api: ApiClient;
  liveSecret: string;
  publishable: string;
  key(opts: { environment?: 'sandbox' | 'production'; kind?: 'secret' | 'publishable'; permissions?: Permission[]; plan?: 'sandbox' | 'production' | 'enterprise' }): Promise<{ id: string; key: string }>;
}

/** A developer account with its keys; `operators`: the platform's operators (their keys reach /v0/reconciliation/…). */
export async function createTenant(opts: { rateLimitPerSecond?: number; dailyQuota?: number; operators?: boolean } = {}): Promise<Tenant> {
  const db = testDb();
  const dev = await createDeveloper(db, {
    name: `test ${expect.getState().currentTestName ?? ''}`.slice(0, 100),
    rateLimitPerSecond: opts.rateLimitPerSecond ?? 100_000,
    dailyQuota: opts.dailyQuota ?? 100_000_000,
    operators: opts.operators,
  });
  const key = (o: Parameters<Tenant['key']>[0]) =>
    createApiKey(db, {
      developerId: dev.id,
      environment: o.environment ?? 'sandbox',
      kind: o.kind ?? 'secret',
      permissions: o.permissions,
      plan: o.plan ?? 'enterprise',
    });
  const secret = (await key({})).key;
  return {
    developerId: dev.id,
    secret,
    api: apiClient(secret),
    liveSecret: (await key({ environment: 'production' })).key,
    publishable: (await key({ kind: 'publishable' })).key,
    key,
  };
}

export async function waitFor<T>(fn: () => Promise<T | undefined | false>, opts: { timeoutMs?: number; what?: string; intervalMs?: number } = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
  throw new Error(`timed out waiting for ${opts.what ?? 'condition'}${last ? `: ${String(last)}` : ''}`);
}

/** Waits until the customer's kyc_status is `status` and returns the customer. */
export function waitForKycStatus(api: ApiClient, customerId: string, status: string, timeoutMs = 30_000) {
  return waitFor(async () => {
    const res = await api.get(`/v0/customers/${customerId}`);
    return res.body.kyc_status === status ? res.body : undefined;
  }, { timeoutMs, what: `${customerId} kyc_status ${status}` });
}

export { documents, pngBytes, pngDataUri } from './documents';

/**
 * A wrong answer to a micro-deposit verification whatever amounts were drawn. The check ignores
 * order, so replacing the first amount by any other value always makes the pair wrong; shifting
 * both by a cent did not (0.48 and 0.49 came back as the right pair reversed).
 */
export function wrongMicroDepositAmounts(right: string[], guess = '0.01'): string[] {
  return [right[0] === guess ? (guess === '0.01' ? '0.02' : '0.01') : guess, right[1]];
}

let emailCounter = 0;
export function individual(overrides: Record<string, unknown> = {}) {
  emailCounter++;
  return {
    type: 'individual',
    email: `jane.doe.${Date.now()}.${emailCounter}@example.com`,
    first_name: 'Jane',
    last_name: 'Doe',
    phone: '+14155550123',
    date_of_birth: '1990-04-12',
    address: { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' },
    ...overrides,
  };
}

export function business(overrides: Record<string, unknown> = {}) {
  emailCounter++;
  return {
    type: 'business',
    email: `ops.${Date.now()}.${emailCounter}@acme.example`,
    business_name: 'Acme Payments GmbH',
    phone: '+4930123456789',
    address: { line1: 'Unter den Linden 1', city: 'Berlin', postal_code: '10117', country: 'DE' },
    tax_id: 'DE123456789',
    ...overrides,
  };
}

/** Runs the admin CLI (`npm run cli -- …`) against the test stack (`env` changes its environment); its exit status and output. */
export function runCli(args: string[], env: Record<string, string> = {}, cli: 'index' | 'signer' = 'index') {
  return spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, `../../src/cli/${cli}.ts`), ...args],
    { env: { ...stack().processEnv, ...env }, encoding: 'utf8' });
}
