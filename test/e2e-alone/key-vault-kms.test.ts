import { randomBytes } from 'node:crypto';
import { privateKeyToAddress } from 'viem/accounts';
import { createTenant, runCli, stack, testDb } from '../harness';
import { LOCAL_KMS_ENV, startLocalKms } from '../harness/local-kms';
import { approvedCustomer } from '../harness/transfers';
import { createKeyVault, kmsKeyVault, localKeyVault } from '../../src/keys/key-vault';

// The KMS key vault against a real KMS-compatible server on this machine (local-kms), never a mock:
// data keys generated and wrapped by KMS, bound to their context, rotated, and every wallet key
// moved into KMS and back by `keys rewrap`.

let kms: Awaited<ReturnType<typeof startLocalKms>>;
beforeAll(async () => {
  kms = await startLocalKms();
});
afterAll(() => kms?.stop());

const context = { purpose: 'wallet-key', wallet_id: 'wal_1' };
const noLocal = { WALLET_KEK_PREVIOUS: [] as Buffer[], WALLET_KMS_KEY_IDS_PREVIOUS: [] as string[], dataDir: '/nonexistent' };

test('a secret sealed under a KMS key opens with that key and context only; the KEK id is the key ARN', async () => {
  const keyId = await kms.newKey();
  const vault = kmsKeyVault({ keyId, endpoint: kms.endpoint });
  expect(vault.currentKekId).toBe(keyId);
  const secret = randomBytes(32);
  const sealed = await vault.seal(secret, context);
  expect(Buffer.from(sealed, 'base64').includes(secret)).toBe(false);
  expect(await vault.open(sealed, context)).toEqual(secret);
  await expect(vault.open(sealed, { ...context, wallet_id: 'wal_2' })).rejects.toThrow(/not bound to wallet_id=wal_2/);
  // Another KMS key, or a local KEK, does not open it.
  await expect(kmsKeyVault({ keyId: await kms.newKey(), endpoint: kms.endpoint }).open(sealed, context)).rejects.toThrow();
  await expect(localKeyVault({ kek: randomBytes(32), dataDir: '/nonexistent', allowGenerated: false }).open(sealed, context)).rejects.toThrow();
});

test('the configuration moves between a local KEK and KMS either way: the new one seals, the old one still opens', async () => {
  const kek = randomBytes(32);
  const keyId = await kms.newKey();
  const sealedLocally = await localKeyVault({ kek, dataDir: '/nonexistent', allowGenerated: false }).seal(Buffer.from('local'), context);
  const intoKms = createKeyVault({ ...noLocal, WALLET_KMS_KEY_ID: keyId, WALLET_KMS_ENDPOINT: kms.endpoint, WALLET_KEK: kek }, { allowGenerated: false });
  expect(intoKms.currentKekId).toBe(keyId);
  expect((await intoKms.open(sealedLocally, context)).toString()).toBe('local');
  const sealedInKms = await intoKms.seal(Buffer.from('kms'), context);

  const backToLocal = createKeyVault({ ...noLocal, WALLET_KEK: kek, WALLET_KMS_KEY_IDS_PREVIOUS: [keyId], WALLET_KMS_ENDPOINT: kms.endpoint }, { allowGenerated: false });
  expect(backToLocal.currentKekId).toMatch(/^local-/);
  expect((await backToLocal.open(sealedInKms, context)).toString()).toBe('kms');

  // A KMS key rotated: the previous key still opens.
  const rotated = createKeyVault({ ...noLocal, WALLET_KMS_KEY_ID: await kms.newKey(), WALLET_KMS_KEY_IDS_PREVIOUS: [keyId], WALLET_KMS_ENDPOINT: kms.endpoint }, { allowGenerated: false });
  expect((await rotated.open(sealedInKms, context)).toString()).toBe('kms');
});

test('keys rewrap moves every wallet key into KMS, and back to the local KEK; each still opens to its address', async () => {
  const t = await createTenant();
  const customer = await approvedCustomer(t.api);
  const w = (await t.api.post('/v0/wallets', { customer_id: customer.id, type: 'custodial', chains: ['base'] })).body;
  const stackKek = stack().processEnv.WALLET_KEK!;
  const keyId = await kms.newKey();
  const kmsEnv = { ...LOCAL_KMS_ENV, WALLET_KMS_ENDPOINT: kms.endpoint };
  const stored = () => testDb().selectFrom('wallets').select(['key_sealed', 'kek_id']).where('id', '=', w.id).executeTakeFirstOrThrow();
  // The SDK warns on Node 20 that its 2027 releases need Node 22: the only thing allowed on stderr.
  const errors = (stderr: string) => stderr.replace(/\(node:\d+\) Warning: NodeVersionSupportWarning[\s\S]*?trace-warnings \.\.\.` to show where the warning was created\)\n?/, '');

  const forward = runCli(['keys', 'rewrap'], { ...kmsEnv, WALLET_KMS_KEY_ID: keyId, WALLET_KEK_PREVIOUS: stackKek, WALLET_KEK: '' });
  expect(errors(forward.stderr)).toBe('');
  expect(forward.status).toBe(0);
  expect(forward.stdout).toMatch(/done: [1-9]\d* moved/);
  const inKms = await stored();
  expect(inKms.kek_id).toBe(keyId);
  const kmsVault = kmsKeyVault({ keyId, endpoint: kms.endpoint });
  expect(privateKeyToAddress(`0x${(await kmsVault.open(inKms.key_sealed!, { purpose: 'wallet-key', wallet_id: w.id })).toString('hex')}`)).toBe(w.addresses.base);
  await expect(localKeyVault({ kek: Buffer.from(stackKek, 'base64'), dataDir: '/nonexistent', allowGenerated: false })
    .open(inKms.key_sealed!, { purpose: 'wallet-key', wallet_id: w.id })).rejects.toThrow();

  const back = runCli(['keys', 'rewrap'], { ...kmsEnv, WALLET_KEK: stackKek, WALLET_KMS_KEY_IDS_PREVIOUS: keyId });
  expect(errors(back.stderr)).toBe('');
  expect(back.status).toBe(0);
  const local = await stored();
  const localVault = localKeyVault({ kek: Buffer.from(stackKek, 'base64'), dataDir: '/nonexistent', allowGenerated: false });
  expect(local.kek_id).toBe(localVault.currentKekId);
  expect(privateKeyToAddress(`0x${(await localVault.open(local.key_sealed!, { purpose: 'wallet-key', wallet_id: w.id })).toString('hex')}`)).toBe(w.addresses.base);
});
