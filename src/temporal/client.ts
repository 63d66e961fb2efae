import { readFileSync } from 'node:fs';
import {
  Client, Connection, ScheduleAlreadyRunning, ScheduleOverlapPolicy, defaultGrpcRetryOptions, makeGrpcRetryInterceptor,
  type ScheduleSpec,
} from '@temporalio/client';
import { bankFileEnvironment, bankFileRails } from '../providers/bank-files/settings';
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

/** A schedule the platform keeps: what it starts, and when (an interval or calendar times). */
interface PlatformSchedule {
  scheduleId: string;
  workflowType: string;
  args?: unknown[];
  spec: ScheduleSpec;
}

/** The bank-file rail's schedules (docs/BANK_FILES.md): its ACH windows and the outbox; none when no rail runs on files. */
export function bankFileSchedules(config: BankFileScheduleConfig): PlatformSchedule[] {
  const environment = bankFileEnvironment(config);
  if (!environment) return [];
  const rails = bankFileRails(config, environment);
  const windowSpec = (crons: string[], timezone: string): ScheduleSpec => (config.BANK_FILE_WINDOW_SECONDS
    ? { intervals: [{ every: config.BANK_FILE_WINDOW_SECONDS * 1000 }] }
    : { cronExpressions: crons, timezone });
  const windows = [
    { window: 'ach_standard', crons: config.ACH_STANDARD_WINDOWS, timezone: config.BANK_FILE_WINDOW_TIMEZONE, on: rails.includes('ach') || rails.includes('ach_push') },
    { window: 'ach_same_day', crons: config.ACH_SAME_DAY_WINDOWS, timezone: config.BANK_FILE_WINDOW_TIMEZONE, on: rails.includes('ach_same_day') },
    { window: 'sepa', crons: config.SEPA_WINDOWS, timezone: config.SEPA_WINDOW_TIMEZONE, on: rails.includes('sepa') },
  ];
  return [
    ...windows.filter((w) => w.on).map((w) => ({
      scheduleId: `bank-files:${w.window}`, workflowType: 'achFileWindowWorkflow', args: [{ window: w.window, uploadRetryMaxSeconds: config.BANK_UPLOAD_RETRY_MAX_SECONDS }], spec: windowSpec(w.crons, w.timezone),
    })),
    { scheduleId: 'bank-files:outbox', workflowType: 'readBankOutboxWorkflow', spec: { intervals: [{ every: config.BANK_OUTBOX_POLL_SECONDS * 1000 }] } },
    // The daily reconciliation of the bank's statements against the books (docs/RECONCILIATION.md).
    {
      scheduleId: 'reconciliation:daily', workflowType: 'dailyReconciliationWorkflow',
      spec: config.RECONCILIATION_SECONDS
        ? { intervals: [{ every: config.RECONCILIATION_SECONDS * 1000 }] }
        : { cronExpressions: config.RECONCILIATION_HOURS, timezone: config.BANK_FILE_WINDOW_TIMEZONE },
    },
    // The sandbox bank on the other side (npm start with SANDBOX_BANK=on) takes and answers the files.
    ...(config.SANDBOX_BANK === 'on' ? [
      { scheduleId: 'sandbox-bank', workflowType: 'sandboxBankWorkflow', spec: { intervals: [{ every: config.SANDBOX_BANK_POLL_SECONDS * 1000 }] } },
      {
        scheduleId: 'sandbox-bank:statements', workflowType: 'sandboxBankStatementWorkflow',
        spec: config.SANDBOX_BANK_STATEMENT_SECONDS
          ? { intervals: [{ every: config.SANDBOX_BANK_STATEMENT_SECONDS * 1000 }] }
          : { cronExpressions: config.SANDBOX_BANK_STATEMENTS, timezone: config.BANK_FILE_WINDOW_TIMEZONE },
      },
    ] : []),
  ];
}

type BankFileScheduleConfig = Pick<Config, 'RAIL_PROVIDERS' | 'SANDBOX_BANK_FILES' | 'BANK_FILE_WINDOW_SECONDS' | 'BANK_FILE_WINDOW_TIMEZONE'
  | 'ACH_STANDARD_WINDOWS' | 'ACH_SAME_DAY_WINDOWS' | 'SEPA_WINDOWS' | 'SEPA_WINDOW_TIMEZONE' | 'BANK_OUTBOX_POLL_SECONDS' | 'BANK_UPLOAD_RETRY_MAX_SECONDS' | 'SANDBOX_BANK' | 'SANDBOX_BANK_POLL_SECONDS' | 'SANDBOX_BANK_STATEMENTS' | 'SANDBOX_BANK_STATEMENT_SECONDS'
  | 'RECONCILIATION_HOURS' | 'RECONCILIATION_SECONDS'>;

/**
 * Maintenance and the bank's file windows run as Temporal schedules, not as loops in our processes.
 * Safe to call at every start: an existing schedule takes this start's times and task queue. A
 * process without the bank's files leaves their schedules alone (another may run them).
 */
export async function ensureSchedules(client: Client, taskQueue: string, opts: { strayDepositScanSeconds: number; bankFiles?: BankFileScheduleConfig }) {
  const schedules: PlatformSchedule[] = [
    { scheduleId: 'maintenance:reap-idempotency-keys', workflowType: 'reapIdempotencyKeysWorkflow', spec: { intervals: [{ every: 3_600_000 }] } },
    // Stray chain deposits (another amount, a repeat, a late one) are found and sent back to their senders.
    { scheduleId: 'chains:scan-stray-deposits', workflowType: 'scanStrayDepositsWorkflow', spec: { intervals: [{ every: opts.strayDepositScanSeconds * 1000 }] } },
    ...(opts.bankFiles ? bankFileSchedules(opts.bankFiles) : []),
  ];
  for (const { scheduleId, workflowType, args, spec } of schedules) {
    const action = { type: 'startWorkflow' as const, workflowType, taskQueue, args: args ?? [] };
    try {
      await client.schedule.create({ scheduleId, spec, action, policies: { overlap: ScheduleOverlapPolicy.SKIP } });
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec, action }));
    }
  }
}
