import type { DataCipher } from '../src/crypto';
import type { Db } from '../src/db';
import { SandboxIdentityProvider, type IdentityVerificationProvider } from '../src/providers/identity-verification';
import { createIdentityVerificationActivities } from './identity-verification';
import { createKycDatabaseActivities } from './kyc-database';
import { createMaintenanceActivities } from './maintenance';
import { createSanctionsActivities } from './sanctions';
import { createAchRailActivities } from './ach-rail';
import { createExternalAccountActivities } from './external-accounts-database';
import { SandboxAchRail, type RailAdapter } from '../src/providers/rails';
import type { SanctionsScreener } from '../src/sanctions/screener';

export interface ActivityDeps {
  db: Db;
  cipher: DataCipher;
  identityProvider?: IdentityVerificationProvider;
  idempotencyRetentionHours: number;
  sanctions: SanctionsScreener;
  /** The ACH rail; the sandbox simulator on the sandbox clock unless a provider is given. */
  achRail?: RailAdapter;
  sandboxTimeScale: number;
}

/** All activities, grouped by the outside system they touch. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createKycDatabaseActivities(deps.db),
    ...createIdentityVerificationActivities({
      db: deps.db,
      cipher: deps.cipher,
      provider: deps.identityProvider ?? new SandboxIdentityProvider(),
    }),
    ...createMaintenanceActivities(deps.db, deps.idempotencyRetentionHours),
    ...createSanctionsActivities({ db: deps.db, cipher: deps.cipher, sanctions: deps.sanctions }),
    ...createAchRailActivities({ db: deps.db, rail: deps.achRail ?? new SandboxAchRail(deps.db, deps.sandboxTimeScale) }),
    ...createExternalAccountActivities(deps.db),
  };
}
