import type { DataCipher } from '../src/crypto';
import type { Db } from '../src/db';
import { SandboxIdentityProvider, type IdentityVerificationProvider } from '../src/providers/identity-verification';
import { createIdentityVerificationActivities } from './identity-verification';
import { createKycDatabaseActivities } from './kyc-database';
import { createMaintenanceActivities } from './maintenance';
import { createSanctionsActivities } from './sanctions';
import type { SanctionsScreener } from '../src/sanctions/screener';

export interface ActivityDeps {
  db: Db;
  cipher: DataCipher;
  identityProvider?: IdentityVerificationProvider;
  idempotencyRetentionHours: number;
  sanctions: SanctionsScreener;
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
  };
}
