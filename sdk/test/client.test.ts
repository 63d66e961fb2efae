// The SDK on its own (`npm test` here): retries, idempotency keys, errors, pagination and webhook
// verification, against a local HTTP server that answers as the API does.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { createClient, FinancialPlatformError, verifyWebhook, WebhookVerificationError } from '../src';

const seen: { method: string; url: string; key: string | undefined; idempotencyKey: string | undefined }[] = [];
let answers: ((req: http.IncomingMessage, res: http.ServerResponse) => void)[] = [];
const server = http.createServer((req, res) => {
  seen.push({ method: req.method!, url: req.url!, key: req.headers['api-key'] as string, idempotencyKey: req.headers['idempotency-key'] as string });
  req.resume();
  const answer = answers.shift() ?? ((_q, r) => r.writeHead(500).end());
  answer(req, res);
});
const json = (status: number, body: unknown, headers: Record<string, string> = {}) => (_req: http.IncomingMessage, res: http.ServerResponse) =>
  res.writeHead(status, { 'Content-Type': 'application/json', 'Request-Id': 'req_1', ...headers }).end(JSON.stringify(body));
let baseUrl = '';
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

test('a POST carries the key and an Idempotency-Key, kept across retries of 429 and 5xx', async () => {
  seen.length = 0;
  answers = [json(429, { error: { code: 'rate_limited', message: 'slow down' } }, { 'Retry-After': '1' }), json(503, { error: { code: 'service_unavailable', message: 'later' } }),
    json(200, { id: 'scr_1', status: 'clear' })];
  const client = createClient({ apiKey: 'sk_test_abc', baseUrl, retryBaseMs: 10 });
  const started = Date.now();
  const screening = client.unwrap(await client.POST('/v0/sanctions/screen', { body: { name: 'Jane Doe' } }));
  assert.equal((screening as { id: string }).id, 'scr_1');
  assert.equal(seen.length, 3);
  assert.ok(Date.now() - started >= 1000, 'waited Retry-After');
  assert.ok(seen.every((s) => s.key === 'sk_test_abc' && s.idempotencyKey && s.idempotencyKey === seen[0].idempotencyKey));
});

test('an error answer is a typed FinancialPlatformError; 4xx are not retried', async () => {
  seen.length = 0;
  answers = [json(400, { error: { code: 'invalid_request', message: "Invalid 'amount'", source: { location: 'body', key: 'amount' } } })];
  const client = createClient({ apiKey: 'sk_test_abc', baseUrl, retryBaseMs: 10 });
  await assert.rejects(async () => client.unwrap(await client.GET('/v0/customers/{customer_id}', { params: { path: { customer_id: 'cus_1' } } })), (err: unknown) => {
    assert.ok(err instanceof FinancialPlatformError);
    assert.deepEqual([err.status, err.code, err.source, err.requestId], [400, 'invalid_request', { location: 'body', key: 'amount' }, 'req_1']);
    return true;
  });
  assert.equal(seen.length, 1);
});

test('pagination follows the cursor to the last page', async () => {
  answers = [json(200, { object: 'list', data: [{ id: 'cus_1' }, { id: 'cus_2' }], has_more: true, cursor: 'cur_a' }), json(200, { object: 'list', data: [{ id: 'cus_3' }], has_more: false })];
  seen.length = 0;
  const client = createClient({ apiKey: 'sk_test_abc', baseUrl });
  const ids: string[] = [];
  for await (const c of client.paginate((cursor) => client.GET('/v0/customers', { params: { query: { cursor } } }))) ids.push(c.id);
  assert.deepEqual(ids, ['cus_1', 'cus_2', 'cus_3']);
  assert.match(seen[1].url, /cursor=cur_a/);
});

test('webhooks: either signature of a rotation verifies; a wrong one, or an old sent_at, does not', () => {
  const body = JSON.stringify({ id: 'evt_1', object: 'event', event: 'webhook.test', api_version: 'v0', created_at: new Date().toISOString(), sent_at: new Date().toISOString(), data: { webhook_id: 'whk_1' } });
  const sig = (secret: string, raw = body) => createHmac('sha256', secret).update(raw).digest('hex');
  const rotation = `${sig('whsec_new')},${sig('whsec_old')}`;
  assert.equal(verifyWebhook({ rawBody: body, signature: rotation, secrets: ['whsec_old'] }).id, 'evt_1');
  assert.equal(verifyWebhook({ rawBody: body, signature: rotation, secrets: ['whsec_new'] }).id, 'evt_1');
  assert.throws(() => verifyWebhook({ rawBody: body, signature: sig('whsec_other'), secrets: ['whsec_new'] }), WebhookVerificationError);
  assert.throws(() => verifyWebhook({ rawBody: `${body} `, signature: sig('whsec_new'), secrets: ['whsec_new'] }), WebhookVerificationError);
  const later = new Date(Date.now() + 6 * 60_000);
  assert.throws(() => verifyWebhook({ rawBody: body, signature: sig('whsec_new'), secrets: ['whsec_new'], now: later }), (err: unknown) => (err as WebhookVerificationError).reason === 'too_old');
});
