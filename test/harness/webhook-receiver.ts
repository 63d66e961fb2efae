import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ApiClient } from './index';

/** A webhook as a receiver got it: the exact bytes, the headers, when. */
export interface ReceivedWebhook {
  raw: Buffer;
  body: any;
  headers: http.IncomingHttpHeaders;
  at: number;
}

/**
 * A real HTTP receiver on loopback. `answer` decides each reply by how many requests came before
 * (a status code, 'hang' to never answer, or a status code given only after a while).
 */
export async function webhookReceiver(answer: (n: number, body: any) => number | 'hang' | { status: number; afterMs: number } = () => 200) {
  const received: ReceivedWebhook[] = [];
  const hung: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = JSON.parse(raw.toString('utf8'));
      const reply = answer(received.length, body);
      received.push({ raw, body, headers: req.headers, at: Date.now() });
      if (reply === 'hang') return void hung.push(res);
      if (typeof reply === 'object') return void setTimeout(() => res.writeHead(reply.status, { 'content-type': 'text/plain' }).end('ok'), reply.afterMs);
      res.writeHead(reply, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    /** The webhooks of one event type (or id), in the order they came. */
    of: (match: string) => received.filter((r) => r.body.event === match || r.body.id === match),
    close: async () => {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** What docs/WEBHOOKS.md tells receivers to do: HMAC-SHA256 of the raw body, compared in constant time with each signature given. */
export function verifySignature(raw: Buffer, header: string | string[] | undefined, secret: string): boolean {
  const expected = createHmac('sha256', secret).update(raw).digest();
  return String(header ?? '').split(',').some((sig) => {
    const given = Buffer.from(sig.trim(), 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

type Receiver = Awaited<ReturnType<typeof webhookReceiver>>;

/** Receivers for one test file: `open` starts one, all are closed after the file's tests. */
export function receiversOfThisFile() {
  const opened: Receiver[] = [];
  afterAll(async () => {
    await Promise.all(opened.map((r) => r.close()));
  });
  return async (answer?: Parameters<typeof webhookReceiver>[0]) => {
    const r = await webhookReceiver(answer);
    opened.push(r);
    return r;
  };
}

/** Registers an endpoint for the events named (all by default); its id and secret. */
export async function registerWebhook(api: ApiClient, url: string, enabledEvents: string[] = ['*']) {
  const res = await api.post('/v0/webhooks', { url, enabled_events: enabledEvents, description: 'test receiver' });
  if (res.status !== 201) throw new Error(`webhook endpoint: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; secret: string };
}

/** A customer created, and the id of its customer.created event. */
export async function customerCreatedEvent(api: ApiClient, customer: Record<string, unknown>) {
  const c = (await api.post('/v0/customers', customer)).body;
  const events = (await api.get(`/v0/events?object_id=${c.id}&type=customer.created`)).body.data;
  return { customerId: c.id as string, eventId: events[0].id as string };
}
