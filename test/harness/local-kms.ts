import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CreateKeyCommand, KMSClient } from '@aws-sdk/client-kms';
import { freePort } from './stack';

/** The AWS SDK reads these; local-kms takes any credentials. */
export const LOCAL_KMS_ENV = { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' };

/**
 * A local-kms server (scripts/install-local-kms.sh) on a free port with a data folder of its own,
 * and a fresh symmetric key in it. The AWS SDK's settings for it are set on this process too.
 */
export async function startLocalKms() {
  const bin = spawnSync('bash', [path.join(__dirname, '../../scripts/install-local-kms.sh')], { encoding: 'utf8' }).stdout.trim().split('\n').at(-1)!;
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'local-kms-'));
  const child = spawn(bin, [], {
    env: { ...process.env, PORT: String(port), KMS_DATA_PATH: dataDir, KMS_REGION: LOCAL_KMS_ENV.AWS_REGION, KMS_ACCOUNT_ID: '111122223333' },
    stdio: 'ignore',
  });
  Object.assign(process.env, LOCAL_KMS_ENV);
  const endpoint = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (await new Promise((resolve) => net.connect(port, '127.0.0.1').once('connect', function (this: net.Socket) { this.end(); resolve(true); }).once('error', () => resolve(false)))) break;
    if (i > 100 || child.exitCode !== null) throw new Error(`local-kms did not start on ${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const kms = new KMSClient({ region: LOCAL_KMS_ENV.AWS_REGION, endpoint });
  const newKey = async () => (await kms.send(new CreateKeyCommand({ Description: 'wallet KEK (tests)' }))).KeyMetadata!.Arn!;
  return {
    endpoint,
    newKey,
    stop: () => {
      child.kill('SIGTERM');
      kms.destroy();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
