import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The MPC signer's recovery works when the platform is gone: it never asks for the platform's key,
// and says which shares it has when two of three are not there.

const signer = (args: string[], env: Record<string, string> = {}) => {
  const { PLATFORM_API_KEY: _key, ...rest } = process.env;
  return spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, '../../src/cli/signer.ts'), ...args], {
    encoding: 'utf8', env: { ...rest, ...env }, cwd: path.join(__dirname, '../..'),
  });
};

test('recover-send needs no PLATFORM_API_KEY, and with the device share alone says that two of three shares are needed, and which it has', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signer-'));
  try {
    const run = signer(['recover-send', 'wal_0000', '--rpc', 'http://127.0.0.1:9', '--token', '0x0000000000000000000000000000000000000001',
      '--currency', 'usdc', '--to', '0x0000000000000000000000000000000000000002', '--amount', '1'], { MPC_SIGNER_DIR: dir });
    expect(run.status).toBe(1);
    expect(run.stderr).not.toMatch(/PLATFORM_API_KEY|TypeError/);
    expect(run.stderr.trim()).toBe('recover-send signs with two of the wallet\'s three shares, without the platform: the device share (kept by this signer) '
      + 'and the backup share (--backup FILE, opened with --recovery-key FILE). Only the device share is here: give --backup and --recovery-key.');
    // The commands that call the platform still ask for its key.
    expect(signer(['pending'], { MPC_SIGNER_DIR: dir }).stderr).toMatch(/PLATFORM_API_KEY is required/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
