import { createHmac, timingSafeEqual } from 'node:crypto';
import type { webhooks } from './schema';

/** Any event the platform delivers, typed by its name (`event`): narrow on it to type `data`. */
export type WebhookEvent = {
  [Name in keyof webhooks]: webhooks[Name] extends { post: { requestBody: { content: { 'application/json': infer Body } } } } ? Body : never;
}[keyof webhooks];

export class WebhookVerificationError extends Error {
  constructor(message: string, readonly reason: 'signature' | 'payload' | 'too_old') {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/**
 * Checks a delivery and returns its event. `signature` is the X-Webhook-Signature header: the lowercase
 * hex HMAC-SHA256 of the raw body with the endpoint's secret, two of them comma-separated during a
 * rotation; `secrets` are the ones you hold (both while you rotate). A delivery sent more than
 * `toleranceSeconds` ago (its signed `sent_at`) is refused as a replay.
 */
export function verifyWebhook(input: {
  rawBody: string | Uint8Array;
  signature: string | null | undefined;
  secrets: string[];
  toleranceSeconds?: number;
  now?: Date;
}): WebhookEvent {
  const raw = typeof input.rawBody === 'string' ? Buffer.from(input.rawBody, 'utf8') : Buffer.from(input.rawBody);
  const given = String(input.signature ?? '').split(',').map((s) => s.trim()).filter((s) => /^[0-9a-f]{64}$/.test(s)).map((s) => Buffer.from(s, 'hex'));
  const signed = input.secrets.some((secret) => {
    const expected = createHmac('sha256', secret).update(raw).digest();
    return given.some((sig) => timingSafeEqual(sig, expected));
  });
  if (!signed) throw new WebhookVerificationError('X-Webhook-Signature matches none of the secrets', 'signature');
  let event: WebhookEvent;
  try {
    event = JSON.parse(raw.toString('utf8')) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('The body is not JSON', 'payload');
  }
  const sentAt = Date.parse((event as { sent_at?: string }).sent_at ?? '');
  const now = (input.now ?? new Date()).getTime();
  if (!Number.isFinite(sentAt)) throw new WebhookVerificationError('The event has no sent_at', 'payload');
  if (Math.abs(now - sentAt) > (input.toleranceSeconds ?? 300) * 1000) {
    throw new WebhookVerificationError(`Sent at ${new Date(sentAt).toISOString()}: outside the tolerance, a replay`, 'too_old');
  }
  return event;
}
