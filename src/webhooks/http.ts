import http from 'node:http';
import https from 'node:https';
import { isPublicAddress, publicOnlyLookup, writtenAddress } from './addresses';

/** What one POST to an endpoint came to: a status code, or the network error (timeout, refused, TLS). */
export type PostOutcome = { statusCode: number; error?: undefined; durationMs: number } | { statusCode?: undefined; error: string; durationMs: number };

/**
 * Connections are kept open between deliveries (a receiver taking many events is not handshaken
 * each time); a live endpoint's name is resolved, and checked, for every new connection.
 */
const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 32 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 32 }),
  publicHttps: new https.Agent({ keepAlive: true, maxSockets: 32, lookup: publicOnlyLookup as never }),
};

/** The response body is read up to this many bytes, then dropped: nothing of it is kept. */
const RESPONSE_CAP = 4096;

/**
 * POSTs `body` to `url` once: no redirects followed, the response read up to a small cap, the whole
 * exchange bounded by `timeoutMs`. `publicOnly`: the connection goes only to a public address,
 * checked when the name is resolved for this connection (live endpoints).
 */
export function postWebhook(
  url: string, body: string, headers: Record<string, string>, opts: { timeoutMs: number; publicOnly: boolean; signal?: AbortSignal },
): Promise<PostOutcome> {
  const started = performance.now();
  const target = new URL(url);
  // A written address is connected to without a lookup: checked here, as a name is when it resolves.
  const address = opts.publicOnly ? writtenAddress(target) : undefined;
  if (address !== undefined && !isPublicAddress(address)) {
    return Promise.resolve({ error: `EADDRNOTPUBLIC: ${address} is not a public address: refused`, durationMs: 0 });
  }
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    // `atLeastMs`: a timed-out attempt lasted its whole timeout (the timer's clock may tick a little
    // ahead of the one measured here).
    const finish = (outcome: { statusCode: number } | { error: string }, atLeastMs = 0) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, durationMs: Math.max(atLeastMs, Math.round(performance.now() - started)) } as PostOutcome);
    };
    const req = client.request(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body).toString(), 'user-agent': 'financial-platform-webhooks/v0', ...headers },
      ...(opts.publicOnly ? { lookup: publicOnlyLookup as never } : {}),
      agent: target.protocol === 'https:' ? (opts.publicOnly ? agents.publicHttps : agents.https) : opts.publicOnly ? false : agents.http,
      // Aborted (the worker stops): the request ends at once, as an error the caller does not record.
      ...(opts.signal ? { signal: opts.signal } : {}),
    }, (res) => {
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > RESPONSE_CAP) res.destroy();
      });
      res.on('end', () => finish({ statusCode: res.statusCode ?? 0 }));
      res.on('close', () => finish({ statusCode: res.statusCode ?? 0 }));
      res.on('error', () => finish({ statusCode: res.statusCode ?? 0 }));
    });
    const timer = setTimeout(() => {
      finish({ error: `no answer within ${opts.timeoutMs} ms` }, opts.timeoutMs);
      req.destroy();
    }, opts.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => finish({ error: `${err.code ?? 'error'}: ${err.message}`.slice(0, 300) }));
    req.end(body);
  });
}
