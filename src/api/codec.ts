import express, { type Request, type Response, type Router } from 'express';
import type { Payload } from '@temporalio/common';
import type { DataCipher } from '../crypto';
import { EncryptionCodec } from '../temporal/payload-codec';

// The remote codec the Temporal Web UI calls to show operators decoded payloads (started with
// `--ui-codec-endpoint <api>/codec`; docs/OPERATIONS.md). Its protocol: POST /codec/decode and
// /codec/encode with `{"payloads": [{"metadata": {k: base64}, "data": base64}]}`, answered alike.
// It decrypts whatever it is given, so it answers only requests from this machine (the UI of the
// embedded stack, or an operator's port-forward to a production API), never the open network.

type WirePayload = { metadata?: Record<string, string>; data?: string };

const fromWire = (p: WirePayload): Payload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
  data: p.data === undefined ? undefined : Buffer.from(p.data, 'base64'),
});
const toWire = (p: Payload): WirePayload => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')])),
  ...(p.data ? { data: Buffer.from(p.data).toString('base64') } : {}),
});

const isLoopback = (address: string | undefined) => address === '::1' || /^(::ffff:)?127\./.test(address ?? '');
/** The browser origins of this machine (the Web UI on its own port). */
const isLocalOrigin = (origin: string) => /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/.test(origin);

export function codecRouter(cipher: DataCipher): Router {
  const codec = new EncryptionCodec(cipher);
  const router = express.Router();
  router.use((req: Request, res: Response, next) => {
    if (!isLoopback(req.socket.remoteAddress)) return res.status(404).end();
    const origin = req.headers.origin;
    if (origin && isLocalOrigin(origin)) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', 'Content-Type, X-Namespace, Authorization');
    }
    if (req.method === 'OPTIONS') return res.status(204).end();
    return next();
  });
  router.use(express.json({ limit: '4mb', type: () => true }));
  for (const action of ['encode', 'decode'] as const) {
    router.post(`/${action}`, async (req: Request, res: Response) => {
      const payloads = (req.body as { payloads?: WirePayload[] })?.payloads;
      if (!Array.isArray(payloads)) return res.status(400).json({ message: 'the body is {"payloads": [...]}' });
      try {
        res.json({ payloads: (await codec[action](payloads.map(fromWire))).map(toWire) });
      } catch {
        res.status(400).json({ message: `a payload could not be ${action}d` });
      }
    });
  }
  return router;
}
