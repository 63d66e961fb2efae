import fs from 'node:fs';
import path from 'node:path';
import { BankFileConflictError, SftpChannel, type SftpChannelSettings } from '../../src/providers/bank-files/sftp-channel';
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

test("the bank's outbox is listed oldest name first, without its partial uploads, and read whole", async () => {
  const channel = new SftpChannel(settings);
  fs.writeFileSync(path.join(bank.root, 'outbox', 'RETURNS_20261127_2.txt'), 'second');
  fs.writeFileSync(path.join(bank.root, 'outbox', 'RETURNS_20261127_1.txt'), 'first');
  fs.writeFileSync(path.join(bank.root, 'outbox', 'RETURNS_20261127_3.txt.part'), 'half');
  expect(await channel.listOutbox()).toEqual([{ name: 'RETURNS_20261127_1.txt', size: 5 }, { name: 'RETURNS_20261127_2.txt', size: 6 }]);
  expect((await channel.download('RETURNS_20261127_2.txt')).toString()).toBe('second');
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
