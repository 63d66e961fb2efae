import type { DataCipher } from '../src/crypto';
import type { Db } from '../src/db';
import { createIdentityVerificationActivities } from './identity-verification';
import { createKycDatabaseActivities } from './kyc-database';
import { createMaintenanceActivities } from './maintenance';
import { createSanctionsActivities } from './sanctions';
import { createAchRailActivities } from './ach-rail';
import { createExternalAccountActivities } from './external-accounts-database';
import type { RailAdapter } from '../src/providers/rails';
import type { SanctionsScreener } from '../src/sanctions/screener';
import type { MoneyProviders } from '../src/providers';
import { createTransferDatabaseActivities } from './transfers-database';
import { createFiatRailActivities } from './fiat-rails';
import { createChainActivities } from './chains';
import { createStrayDepositActivities } from './stray-deposits';
import { createTransferReviewActivities, type TransferReviewLimits } from './transfer-review';
import { createWalletWatchActivities } from './wallet-watch';
import { createWebhookActivities } from './webhooks';
import { createMpcActivities } from './mpc';
import type { DeliverySettings } from '../src/webhooks/delivery';
import { createBankFileActivities, type BankFileActivityDeps } from './bank-files';
import { createSandboxBankActivities } from './sandbox-bank';
import { createReconciliationActivities } from './reconciliation';
import type { SandboxBankSettings } from '../src/sandbox-bank/sandbox-bank';

export interface ActivityDeps {
  db: Db;
  cipher: DataCipher;
  idempotencyRetentionHours: number;
  sanctions: SanctionsScreener;
  /** The ACH rail for micro-deposits; the sandbox simulator unless a provider is given. */
  achRail?: RailAdapter;
  providers: MoneyProviders;
  transferLimits: TransferReviewLimits;
  /** How often chain activities look at the chain. */
  chainPollMs: number;
  /** How often a pending MPC co-signature looks whether its nonce was used elsewhere. */
  mpcNonceCheckMs: number;
  /** How long after its creation a transfer's deposit address is still read for stray deposits. */
  strayDepositWatchMs: number;
  /** Webhook delivery: timeouts, the retry schedule, and how often an idle endpoint looks for events. */
  webhookDelivery: DeliverySettings;
  /** The bank's file interface, when a rail runs on it (docs/BANK_FILES.md). */
  bankFiles?: BankFileActivityDeps;
  /** The sandbox bank behind `npm start`'s SFTP server (SANDBOX_BANK=on). */
  sandboxBank?: SandboxBankSettings;
  /** What turns standing routes' deposits into transfers (src/payment-routes/carry-deposits.ts); without it the watchers only record them. */
  routeTransfers?: Parameters<typeof createWalletWatchActivities>[0]['routes'];
}

/** All activities, grouped by the outside system they touch. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createKycDatabaseActivities(deps.db),
    ...createIdentityVerificationActivities({
      db: deps.db,
      cipher: deps.cipher,
      providers: deps.providers.identity,
    }),
    ...createMaintenanceActivities(deps.db, deps.idempotencyRetentionHours),
    ...createSanctionsActivities({ db: deps.db, cipher: deps.cipher, sanctions: deps.sanctions }),
    ...createAchRailActivities({ db: deps.db, rail: deps.achRail ?? deps.providers.rails }),
    ...createExternalAccountActivities(deps.db),
    ...createTransferDatabaseActivities(deps.db),
    ...createFiatRailActivities({ db: deps.db, rails: deps.providers.rails }),
    ...createChainActivities({ db: deps.db, chains: deps.providers.chains, keys: deps.providers.keys, pollMs: deps.chainPollMs, strayDepositWatchMs: deps.strayDepositWatchMs }),
    ...createStrayDepositActivities({ db: deps.db, cipher: deps.cipher, sanctions: deps.sanctions }),
    ...createMpcActivities({ db: deps.db, keys: deps.providers.keys, chains: deps.providers.chains, nonceCheckMs: deps.mpcNonceCheckMs }),
    ...createWalletWatchActivities({ db: deps.db, chains: deps.providers.chains, pollMs: deps.chainPollMs, routes: deps.routeTransfers }),
    ...createWebhookActivities({ db: deps.db, cipher: deps.cipher, delivery: deps.webhookDelivery }),
    ...(deps.bankFiles ? createBankFileActivities(deps.bankFiles) : {}),
    ...(deps.bankFiles ? createReconciliationActivities({ ...deps.bankFiles, chains: deps.providers.chains }) : {}),
    ...(deps.sandboxBank ? createSandboxBankActivities(deps.sandboxBank) : {}),
    ...createTransferReviewActivities({
      db: deps.db, cipher: deps.cipher, sanctions: deps.sanctions, rates: deps.providers.rates, limits: deps.transferLimits, chains: deps.providers.chains,
      rails: deps.providers.rails,
    }),
  };
}
