import { mkdtempSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { localKeyVault } from '../../src/keys/key-vault';

const context = { purpose: 'wallet-key', wallet_id: 'wal_1' };

test('a sealed secret opens under its KEK and context only, and holds nothing of the secret in the clear', async () => {
  const kek = randomBytes(32);
  const vault = localKeyVault({ kek, dataDir: '/nonexistent', allowGenerated: false });
  const secret = randomBytes(32);
  const sealed = await vault.seal(secret, context);
  expect(Buffer.from(sealed, 'base64').includes(secret)).toBe(false);
  expect(sealed.includes(secret.toString('hex'))).toBe(false);
  expect(await vault.open(sealed, context)).toEqual(secret);
  await expect(vault.open(sealed, { ...context, wallet_id: 'wal_2' })).rejects.toThrow(/not bound to wallet_id=wal_2/);
  await expect(localKeyVault({ kek: randomBytes(32), dataDir: '/nonexistent', allowGenerated: false }).open(sealed, context)).rejects.toThrow();
});

test('after a KEK rotation the previous KEK still opens; the new one seals, under its own id', async () => {
  const old = randomBytes(32);
  const sealedOld = await localKeyVault({ kek: old, dataDir: '/nonexistent', allowGenerated: false }).seal(Buffer.from('k'), context);
  const rotated = localKeyVault({ kek: randomBytes(32), previous: [old], dataDir: '/nonexistent', allowGenerated: false });
  expect((await rotated.open(sealedOld, context)).toString()).toBe('k');
  expect(rotated.currentKekId).not.toBe(localKeyVault({ kek: old, dataDir: '/nonexistent', allowGenerated: false }).currentKekId);
  expect(rotated.currentKekId).toMatch(/^local-[0-9a-f]{12}$/);
});

test('production processes need WALLET_KEK; npm start makes one once, private to the process owner', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'kek-'));
  expect(() => localKeyVault({ dataDir, allowGenerated: false })).toThrow('WALLET_KEK is required');
  const first = localKeyVault({ dataDir, allowGenerated: true });
  expect(localKeyVault({ dataDir, allowGenerated: true }).currentKekId).toBe(first.currentKekId);
  expect(statSync(path.join(dataDir, 'keys', 'wallet-kek')).mode & 0o777).toBe(0o600);
});
