import { readFileSync } from 'node:fs';
import {
  Client, Connection, ScheduleAlreadyRunning, ScheduleOverlapPolicy, defaultGrpcRetryOptions, makeGrpcRetryInterceptor,
} from '@temporalio/client';
import type { Config } from '../config';
import type { DataCipher } from '../crypto';
import { encryptedDataConverter } from './payload-codec';

type TemporalAuthConfig = Partial<Pick<Config, 'TEMPORAL_API_KEY' | 'TEMPORAL_TLS_CERT_PATH' | 'TEMPORAL_TLS_KEY_PATH'>>;

/**
 * How the client and the worker authenticate to the cluster: nothing on a private network (the dev
 * server, a self-hosted cluster), an API key or an mTLS client certificate on Temporal Cloud.
 */
export function temporalAuthOptions(config: TemporalAuthConfig): { tls?: { clientCertPair?: { crt: Buffer; key: Buffer } }; apiKey?: string } {
  if (config.TEMPORAL_API_KEY) return { tls: {}, apiKey: config.TEMPORAL_API_KEY };
  if (config.TEMPORAL_TLS_CERT_PATH || config.TEMPORAL_TLS_KEY_PATH) {
    if (!config.TEMPORAL_TLS_CERT_PATH || !config.TEMPORAL_TLS_KEY_PATH) throw new Error('TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together');
    return { tls: { clientCertPair: { crt: readFileSync(config.TEMPORAL_TLS_CERT_PATH), key: readFileSync(config.TEMPORAL_TLS_KEY_PATH) } } };
  }
  return {};
}

/** A client of the platform's namespace; its payloads are encrypted with `cipher` (payload-codec.ts). */
export async function connectTemporalClient(config: Pick<Config, 'TEMPORAL_NAMESPACE'> & TemporalAuthConfig, address: string, cipher: DataCipher): Promise<Client> {
  // An API request must fail fast (503) when Temporal is unreachable, not retry for ~20 s (the SDK default).
  const connection = await Connection.connect({
    ...temporalAuthOptions(config),
    address,
    connectTimeout: '10s',
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 4 }))],
  });
  return new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, dataConverter: encryptedDataConverter(cipher) });
}

/** Maintenance runs as Temporal schedules, not as loops in our processes. Safe to call at every start. */
export async function ensureSchedules(client: Client, taskQueue: string, opts: { strayDepositScanSeconds: number }) {
  const schedules = [
    { scheduleId: 'maintenance:reap-idempotency-keys', every: 3_600_000, workflowType: 'reapIdempotencyKeysWorkflow' },
    // Stray chain deposits (another amount, a repeat, a late one) are found and sent back to their senders.
    { scheduleId: 'chains:scan-stray-deposits', every: opts.strayDepositScanSeconds * 1000, workflowType: 'scanStrayDepositsWorkflow' },
  ];
  for (const { scheduleId, every, workflowType } of schedules) {
    const spec = { intervals: [{ every }] };
    const action = { type: 'startWorkflow' as const, workflowType, taskQueue, args: [] };
    try {
      await client.schedule.create({ scheduleId, spec, action, policies: { overlap: ScheduleOverlapPolicy.SKIP } });
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      // Created by an earlier start: it follows this one's interval and task queue.
      await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec, action }));
    }
  }
}
