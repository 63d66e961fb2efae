import type { Db } from '../db';
import type { KeyVault } from '../keys/key-vault';
import { walletKeyContext } from '../wallets/wallet';

const BATCH = 100;

/**
 * Moves every wallet key (and MPC wallet's platform share) sealed under an earlier KEK to the current one, without downtime: each key is
 * opened (the vault still holds the earlier KEKs) and sealed anew, bound to its wallet as before, and
 * written only if nobody moved it meanwhile. Afterwards the earlier KEKs can go (WALLET_KEK_PREVIOUS).
 */
export async function rewrapWalletKeys(db: Db, vault: KeyVault, onProgress: (line: string) => void): Promise<number> {
  let moved = 0;
  for (;;) {
    const rows = await db.selectFrom('wallets').select(['id', 'type', 'key_sealed', 'kek_id']).where('kek_id', '<>', vault.currentKekId).where('key_sealed', 'is not', null)
      .orderBy('id').limit(BATCH).execute();
    if (rows.length === 0) break;
    for (const row of rows) {
      const context = walletKeyContext(row);
      const key = await vault.open(row.key_sealed!, context);
      const sealed = await vault.seal(key, context);
      key.fill(0);
      await db.updateTable('wallets').set({ key_sealed: sealed, kek_id: vault.currentKekId, updated_at: new Date() })
        .where('id', '=', row.id).where('kek_id', '=', row.kek_id).execute();
      moved++;
    }
    onProgress(`${moved} wallet key(s) moved to ${vault.currentKekId}`);
  }
  return moved;
}
