import type { SealedMpcMessage } from '../mpc/channel';

// The customer's signer talks to the platform's API over HTTPS with the customer's API key
// (docs/MPC.md): these are the only calls it makes.

export interface MpcSessionView {
  id: string;
  wallet_id: string;
  kind: 'key_generation' | 'signing';
  status: 'awaiting_customer' | 'completed' | 'failed' | 'expired' | 'canceled';
  protocol_session: string;
  next_round: number | null;
  platform_public_key: string | null;
  customer_party: number | null;
  transfer_id: string | null;
  transaction: { chain: string; chain_id: number; nonce: number; token: string; currency: string; to: string; amount: string; serialized: string } | null;
  signing_hash: string | null;
  signature: { r: string; s: string; y_parity: number } | null;
  address: string | null;
  messages: SealedMpcMessage[];
  failure_reason: string | null;
  expires_at: string;
}

export type MpcSessionSummaryView = Omit<MpcSessionView, 'messages'>;

export interface WalletView {
  id: string;
  type: string;
  status: string;
  chains: string[];
  addresses: Record<string, string>;
}

/** An answer of the API other than 2xx: its status and the shared error body. */
export class SignerApiError extends Error {
  constructor(readonly status: number, readonly body: { error?: { type?: string; message?: string } }) {
    super(`${status} ${body.error?.type ?? ''}: ${body.error?.message ?? JSON.stringify(body)}`);
  }
}

export class PlatformApi {
  /**
   * `retryForMs`: how long a call is tried again while the platform cannot answer. Longer than the
   * platform's own wait for its workflow (WORKFLOW_ANSWER_TIMEOUT_SECONDS): a 503 after a full wait leaves time to try again.
   */
  constructor(private readonly baseUrl: string, private readonly apiKey: string, private readonly retryForMs = 300_000) {}

  /**
   * One call; a 503 (the platform's workflow did not answer in time: a worker restarting) or a lost
   * connection is tried again, the same request, for up to `retryForMs`: every call here is safe to repeat.
   */
  private async call<T>(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
    const until = Date.now() + this.retryForMs;
    for (;;) {
      try {
        return await this.callOnce<T>(method, path, body, idempotencyKey);
      } catch (err) {
        const retryable = err instanceof SignerApiError ? err.status === 503 : err instanceof TypeError; // fetch's network failure
        if (!retryable || Date.now() > until) throw err;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  private async callOnce<T>(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
    const response = await fetch(new URL(path, this.baseUrl), {
      method,
      headers: {
        'api-key': this.apiKey, 'content-type': 'application/json',
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const parsed = await response.json() as T;
    if (!response.ok) throw new SignerApiError(response.status, parsed as never);
    return parsed;
  }

  createMpcWallet(body: { customer_id: string; chains: string[]; label?: string }, idempotencyKey: string): Promise<WalletView> {
    return this.call('POST', '/v0/wallets', { ...body, type: 'mpc' }, idempotencyKey);
  }

  wallet(walletId: string): Promise<WalletView> {
    return this.call('GET', `/v0/wallets/${encodeURIComponent(walletId)}`);
  }

  /** Lists carry no messages: read a session for them. */
  async sessions(walletId: string, filter: { status?: string; kind?: string } = {}): Promise<MpcSessionSummaryView[]> {
    const query = new URLSearchParams({ limit: '100', ...filter });
    return (await this.call<{ data: MpcSessionSummaryView[] }>('GET', `/v0/wallets/${encodeURIComponent(walletId)}/mpc_sessions?${query}`)).data;
  }

  session(walletId: string, sessionId: string): Promise<MpcSessionView> {
    return this.call('GET', `/v0/wallets/${encodeURIComponent(walletId)}/mpc_sessions/${encodeURIComponent(sessionId)}`);
  }

  postRound(walletId: string, sessionId: string, round: { round: number; public_key?: string; party?: 2 | 3; messages: SealedMpcMessage[]; address?: string }): Promise<MpcSessionView> {
    return this.call('POST', `/v0/wallets/${encodeURIComponent(walletId)}/mpc_sessions/${encodeURIComponent(sessionId)}/messages`, round);
  }
}
