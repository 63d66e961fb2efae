import fs from 'node:fs';
import path from 'node:path';
import { PaymentAlreadyFiledError, recordOutboundFile, recordOutboundFileWhileBuilt, uploadRecordedFile } from '../../src/bank-files/outbound-files';
import { createDataCipher } from '../../src/crypto';
import { buildAchFile, readAchFile, type AchEntry } from '../../src/providers/bank-files/nacha';
import { BankFileConflictError, SftpChannel, type SftpChannelSettings } from '../../src/providers/bank-files/sftp-channel';
import { stack, testDb } from '../harness';
import { startSftpServer, type SftpServer } from '../harness/sftp-server';

// The file exchange with the bank over a real OpenSSH server (Debian's sshd on loopback, a key of its
// own): what the bank-file rails upload and read.

let bank: SftpServer;
let settings: SftpChannelSettings;
beforeAll(async () => {
  bank = await startSftpServer();
  settings = { host: bank.host, port: bank.port, username: bank.username, privateKey: bank.privateKey, hostKey: bank.hostKey, inbox: 'inbox', outbox: 'outbox' };
});
afterAll(async () => {
  await bank?.stop();
});

test('an upload lands whole in the inbox; repeated after a crash it changes nothing; other bytes under the same name are refused', async () => {
  const channel = new SftpChannel(settings);
  const file = Buffer.from('101 091000019 1234567891611271200A094101BANK                   PLATFORM               \n');
  expect(await channel.upload('ACH_20261127_A.txt', file)).toMatchObject({ uploaded: true, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
  expect(fs.readFileSync(path.join(bank.root, 'inbox', 'ACH_20261127_A.txt')).equals(file)).toBe(true);
  expect(fs.readdirSync(path.join(bank.root, 'inbox'))).toEqual(['ACH_20261127_A.txt']); // no .part left

  // The same name and bytes again (a crash after the upload, before it was recorded): nothing new.
  expect(await channel.upload('ACH_20261127_A.txt', file)).toMatchObject({ uploaded: false });
  await expect(channel.upload('ACH_20261127_A.txt', Buffer.concat([file, file]))).rejects.toBeInstanceOf(BankFileConflictError);
  expect(fs.readFileSync(path.join(bank.root, 'inbox', 'ACH_20261127_A.txt')).equals(file)).toBe(true);
});

test("the bank's outbox is listed oldest name first, without its partial uploads; the files picked are read whole", async () => {
  const channel = new SftpChannel(settings);
  fs.writeFileSync(path.join(bank.root, 'outbox', 'RETURNS_20261127_2.txt'), 'second');
  fs.writeFileSync(path.join(bank.root, 'outbox', 'RETURNS_20261127_1.txt'), 'first');
  fs.writeFileSync(path.join(bank.root, 'outbox', 'RETURNS_20261127_3.txt.part'), 'half');
  let listed: unknown;
  const read: [string, string][] = [];
  await channel.readOutbox(async (files) => {
    listed = files;
    return ['RETURNS_20261127_2.txt'];
  }, async (name, bytes) => {
    read.push([name, bytes.toString()]);
  });
  expect(listed).toEqual([{ name: 'RETURNS_20261127_1.txt', size: 5 }, { name: 'RETURNS_20261127_2.txt', size: 6 }]);
  expect(read).toEqual([['RETURNS_20261127_2.txt', 'second']]);
});

test('a server presenting another host key is refused before anything is sent', async () => {
  const impostor = await startSftpServer();
  try {
    // The impostor answers on its port with its own host key; we pin the bank's.
    const channel = new SftpChannel({ ...settings, port: impostor.port, privateKey: impostor.privateKey });
    await expect(channel.upload('ACH_20261127_B.txt', Buffer.from('x'))).rejects.toThrow();
    expect(fs.readdirSync(path.join(impostor.root, 'inbox'))).toEqual([]);
  } finally {
    await impostor.stop();
  }
});

test('a file is recorded (encrypted, with its payments) before upload; an upload repeated after a crash sends nothing new; a payment goes out in one file', async () => {
  const cipher = createDataCipher({ DATA_ENCRYPTION_KEY: stack().encryptionKey, DATA_ENCRYPTION_PREVIOUS_KEYS: [], dataDir: '' }, { allowGenerated: false });
  const channel = new SftpChannel(settings);
  const run = `${process.pid}${Date.now()}`.slice(-8);
  const entries: AchEntry[] = Array.from({ length: 20 }, (_, i) => ({
    idNumber: `P${run}${String(i).padStart(3, '0')}`, direction: 'credit', accountType: 'checking', routingNumber: '021000021',
    accountNumber: `88${run}${i}`, amountMinor: BigInt(100 + i), name: `Payee ${i}`, secCode: 'PPD', effectiveDate: '2026-11-30',
  }));
  const built = await buildAchFile(
    { odfiRouting: '091000019', odfiName: 'ODFI TEST BANK', companyId: '1234567890', companyName: 'FIN PLATFORM', entryDescription: 'PAYOUT' },
    entries, { createdAt: new Date('2026-11-27T14:05:00Z'), fileIdModifier: 'A' },
  );
  const name = `ACH_${run}_A.txt`;
  const file = { rail: 'ach', name, fileIdModifier: 'A', text: built.text, totals: built.totals, paymentIds: entries.map((e) => e.idNumber) };
  const recorded = await recordOutboundFile(testDb(), cipher, file);
  expect(await recordOutboundFile(testDb(), cipher, file)).toEqual(recorded); // recorded once
  const row = await testDb().selectFrom('bank_files').selectAll().where('id', '=', recorded.id).executeTakeFirstOrThrow();
  expect(row).toMatchObject({ status: 'recorded', entry_count: 20, total_credit_minor: String(built.totals.totalCreditMinor) });
  expect(row.contents_encrypted).not.toContain(entries[0].accountNumber);

  // A crash after the upload, before it was marked: the repeat finds the same bytes and marks it.
  await channel.upload(name, Buffer.from(built.text));
  expect(await uploadRecordedFile(testDb(), cipher, channel, recorded.id)).toEqual({ uploaded: false });
  expect(await uploadRecordedFile(testDb(), cipher, channel, recorded.id)).toEqual({ uploaded: false });
  expect((await testDb().selectFrom('bank_files').select('status').where('id', '=', recorded.id).executeTakeFirstOrThrow()).status).toBe('uploaded');
  const landed = readAchFile(fs.readFileSync(path.join(bank.root, 'inbox', name), 'utf8'));
  expect(landed.batches[0].entries.map((e) => e.idNumber)).toEqual(entries.map((e) => e.idNumber));

  // Another file with one of those payments is refused whole.
  await expect(recordOutboundFile(testDb(), cipher, { ...file, name: `ACH_${run}_B.txt`, fileIdModifier: 'B' })).rejects.toBeInstanceOf(PaymentAlreadyFiledError);
  expect(await testDb().selectFrom('bank_files').select('id').where('name', '=', `ACH_${run}_B.txt`).execute()).toEqual([]);
});

test("a window's file recorded while it is built: a build that fails leaves nothing of it, nor of its payments' change", async () => {
  const cipher = createDataCipher({ DATA_ENCRYPTION_KEY: stack().encryptionKey, DATA_ENCRYPTION_PREVIOUS_KEYS: [], dataDir: '' }, { allowGenerated: false });
  const run = `${process.pid}${Date.now()}`.slice(-8);
  const head = { rail: 'ach', name: `ACH_${run}_W.txt`, fileIdModifier: 'W', paymentIds: [`bp_w${run}a`, `bp_w${run}b`], windowId: `window-${run}` };
  // The payments' change names the file (as a window's marks its payments filed in it): made with
  // its row, undone with it. Here it names it on another file's row.
  const other = await recordOutboundFile(testDb(), cipher, {
    rail: 'ach', name: `ACH_${run}_O.txt`, fileIdModifier: 'O', text: 'another file', totals: { entryCount: 0, entryHash: 0n, totalDebitMinor: 0n, totalCreditMinor: 0n }, paymentIds: [],
  });
  const named = (fileId: string) => testDb().updateTable('bank_files').set({ detail: `names ${fileId}` }).where('id', '=', other.id);
  const otherDetail = async () => (await testDb().selectFrom('bank_files').select('detail').where('id', '=', other.id).executeTakeFirstOrThrow()).detail;
  await expect(testDb().transaction().execute((trx) => recordOutboundFileWhileBuilt(trx, cipher, head, async () => {
    throw new Error('the build failed');
  }, named))).rejects.toThrow('the build failed');
  expect(await testDb().selectFrom('bank_files').select('id').where('name', '=', head.name).execute()).toEqual([]);
  expect(await testDb().selectFrom('bank_file_payments').select('file_id').where('payment_id', 'in', head.paymentIds).execute()).toEqual([]);
  expect(await otherDetail()).toBeNull();

  // Built: the row holds the bytes (encrypted, their checksum), the payments and the change.
  const text = `a file of ${run}`;
  const totals = { entryCount: 2, entryHash: 0n, totalDebitMinor: 0n, totalCreditMinor: 300n };
  const recorded = await testDb().transaction().execute((trx) => recordOutboundFileWhileBuilt(trx, cipher, head, async () => ({ text, totals }), named));
  const row = await testDb().selectFrom('bank_files').selectAll().where('id', '=', recorded.id).executeTakeFirstOrThrow();
  expect(row).toMatchObject({ name: head.name, status: 'recorded', entry_count: 2, total_credit_minor: '300', window_id: head.windowId });
  expect(await otherDetail()).toBe(`names ${recorded.id}`);
  expect(cipher.decrypt(row.contents_encrypted).toString()).toBe(text);
  expect(row.sha256).toBe(recorded.sha256);
  expect((await testDb().selectFrom('bank_file_payments').select('payment_id').where('file_id', '=', recorded.id).orderBy('payment_id').execute()).map((p) => p.payment_id)).toEqual(head.paymentIds);
});
