import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSftpServer as startSshd, type SftpServer } from '../../src/embedded/sftp-server';
import { freePort } from './stack';

export type { SftpServer };

/**
 * The bank's side of the file exchange for a test: the project's sshd (src/embedded/sftp-server.ts)
 * in a folder of its own, with fresh keys, on a free loopback port; stop() removes the folder.
 */
export async function startSftpServer(): Promise<SftpServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sftp-server-'));
  const server = await startSshd({ dir, port: await freePort() });
  return {
    ...server,
    stop: async () => {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
