import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Config } from '../src/config';
import type { DataCipher } from '../src/crypto';
import type { Db } from '../src/db';
import type { Logger } from '../src/logger';
import type { MoneyProviders } from '../src/providers';
import { fileAchWindow, type AchWindow, type AchWindowSettings } from '../src/bank-files/ach-window';
import { handleInboundEvents, markInboundFileHandled, railEventsOf, recordInboundFile, recordUnreadableInboundFile } from '../src/bank-files/inbound-files';
import { readInboundFile } from '../src/bank-files/inbound-items';
import { fileSepaWindow, type SepaWindowSettings } from '../src/bank-files/sepa-window';
import { uploadRecordedFile } from '../src/bank-files/outbound-files';
import { SftpChannel } from '../src/providers/bank-files/sftp-channel';
import { achOriginator, bankFileEnvironment, bankFileRails, sepaDebtor, sftpSettings } from '../src/providers/bank-files/settings';
import { handleRailEvent } from '../src/transfers/rail-events';

export interface BankFileActivityDeps extends Pick<MoneyProviders, 'chains' | 'rates' | 'availability'> {
  db: Db;
  cipher: DataCipher;
  log: Logger;
  config: Config;
  /** Where the rail events of the bank's files go (the transfer workflows; a virtual account's deposit creates its transfer). */
  temporal: Client;
  channel: Pick<SftpChannel, 'upload' | 'readOutbox'>;
  ach: AchWindowSettings;
  sepa: SepaWindowSettings;
}

/**
 * The bank-file rail's activities (docs/BANK_FILES.md): a window's file is recorded, then uploaded;
 * the bank's outbox is read, each file recorded with its effects once, then its events handled.
 */
export function createBankFileActivities(deps: BankFileActivityDeps) {
  return {
    /** The window's queued payments in one recorded file (null when none are queued); a retry answers the same file. */
    async fileBankWindow(input: { windowId: string; window: AchWindow | 'sepa' }) {
      if (input.window === 'sepa') return fileSepaWindow(deps.db, deps.cipher, deps.sepa, { id: input.windowId });
      return fileAchWindow(deps.db, deps.cipher, deps.ach, { id: input.windowId, kind: input.window });
    },

    /** The recorded bytes to the bank's inbox, once however often it is tried. */
    async uploadBankFile(input: { fileId: string }) {
      return uploadRecordedFile(deps.db, deps.cipher, deps.channel, input.fileId);
    },

    /** Every file in the bank's outbox not handled yet, over one connection: recorded with its effects, then its events handled. */
    async readBankOutbox(): Promise<{ files: string[]; events: number }> {
      const files: string[] = [];
      let events = 0;
      await deps.channel.readOutbox(async (listed) => {
        const names = listed.map((f) => f.name);
        const done = names.length === 0 ? [] : await deps.db.selectFrom('bank_files').select('name')
          .where('direction', '=', 'inbound').where('name', 'in', names).where('status', 'in', ['processed', 'rejected']).execute();
        const doneNames = new Set(done.map((d) => d.name));
        return names.filter((n) => !doneNames.has(n));
      }, async (name, bytes) => {
        Context.current().heartbeat();
        const handled = await applyInboundFile(deps, name, bytes.toString('utf8'));
        if (handled === undefined) return;
        events += handled;
        files.push(name);
      });
      return { files, events };
    },
  };
}

/** One file of the bank's: recorded with its effects, then its events handled; how many, or undefined for a file we cannot read. */
async function applyInboundFile(deps: BankFileActivityDeps, name: string, text: string): Promise<number | undefined> {
  let read;
  try {
    read = readInboundFile(text);
  } catch (err) {
    // Not a file we can read: kept for an operator, and not read again.
    await recordUnreadableInboundFile(deps.db, deps.cipher, { name, text, reason: (err as Error).message });
    deps.log.error({ file: name, reason: (err as Error).message }, 'bank file not understood; kept for an operator');
    return undefined;
  }
  const recorded = await recordInboundFile(deps.db, deps.cipher, { name, text, ...read });
  for (const item of read.items) {
    if (item.kind === 'file_rejection' && recorded.fresh) {
      deps.log.error({ file: item.file, reasons: item.reasons }, 'the bank rejected a file: its payments wait for an operator (bank-files show, resend)');
    }
  }
  if (recorded.handled) return 0;
  let events = 0;
  await handleInboundEvents(await railEventsOf(deps.db, name, read.items), async (event) => {
    await handleRailEvent(deps, event, deps.ach.environment);
    events++;
    // A worker that dies mid-file is noticed in seconds; the next attempt handles the rest.
    Context.current().heartbeat();
  });
  await markInboundFileHandled(deps.db, recorded.id);
  return events;
}

export type BankFileActivities = ReturnType<typeof createBankFileActivities>;

/** What the bank-file activities need, when a rail runs on the bank's files; undefined otherwise. */
export function bankFileActivityDeps(
  config: Config, shared: { db: Db; cipher: DataCipher; temporal: Client; log: Logger } & Pick<MoneyProviders, 'chains' | 'rates' | 'availability'>,
): BankFileActivityDeps | undefined {
  const environment = bankFileEnvironment(config);
  if (!environment) return undefined;
  return {
    db: shared.db, cipher: shared.cipher, temporal: shared.temporal, log: shared.log, chains: shared.chains, rates: shared.rates, availability: shared.availability,
    config,
    channel: new SftpChannel(sftpSettings(config)),
    ach: { originator: achOriginator(config), environment, rails: bankFileRails(config, environment), settlementSeconds: config.BANK_FILE_SETTLEMENT_SECONDS },
    sepa: { debtor: sepaDebtor(config), environment, rails: bankFileRails(config, environment), settlementSeconds: config.BANK_FILE_SETTLEMENT_SECONDS },
  };
}
