import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './stack';

/**
 * A real OpenSSH server (Debian's sshd, scripts/install-sftp-server.sh) on a loopback port, serving
 * SFTP only, with its own host key and one authorized client key: the bank's side of the file
 * exchange. `root` is the folder the client lands in; the bank's inbox and outbox are made in it.
 */
export async function startSftpServer(opts: { user?: string } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sftp-server-'));
  const root = path.join(dir, 'bank');
  for (const folder of ['inbox', 'outbox']) fs.mkdirSync(path.join(root, folder), { recursive: true });
  const hostKey = path.join(dir, 'host_ed25519');
  const clientKey = path.join(dir, 'client_ed25519');
  for (const key of [hostKey, clientKey]) execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  fs.copyFileSync(`${clientKey}.pub`, path.join(dir, 'authorized_keys'));
  const port = await freePort();
  const config = path.join(dir, 'sshd_config');
  fs.writeFileSync(config, [
    `Port ${port}`, 'ListenAddress 127.0.0.1', `HostKey ${hostKey}`, `PidFile ${path.join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`, 'PubkeyAuthentication yes', 'PasswordAuthentication no',
    'KbdInteractiveAuthentication no', 'PermitRootLogin prohibit-password', 'UsePAM no', 'StrictModes no',
    'Subsystem sftp internal-sftp', `ForceCommand internal-sftp -d ${root}`, 'AllowTcpForwarding no', 'X11Forwarding no',
    'LogLevel ERROR', '',
  ].join('\n'));
  // sshd's privilege separation needs this folder (Debian's service makes it at boot).
  fs.mkdirSync('/run/sshd', { recursive: true });
  const child: ChildProcess = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += String(d)));
  await waitForPort(port, child, () => stderr);
  return {
    host: '127.0.0.1',
    port,
    username: opts.user ?? os.userInfo().username,
    privateKey: fs.readFileSync(clientKey, 'utf8'),
    privateKeyFile: clientKey,
    /** The host key's public line, for clients that pin it. */
    hostKey: fs.readFileSync(`${hostKey}.pub`, 'utf8').trim(),
    /** The bank's folders on disk. */
    root,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number, child: ChildProcess, stderr: () => string) {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`sshd exited (${child.exitCode}): ${stderr()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`sshd did not listen on ${port}: ${stderr()}`);
}

export type SftpServer = Awaited<ReturnType<typeof startSftpServer>>;
