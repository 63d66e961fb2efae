import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startServiceProcess, waitUntilAnswering, type ServiceProcess } from './service-process';

// A real OpenSSH server (Debian's sshd, scripts/install-sftp-server.sh) on a loopback port, serving
// SFTP only, with its own host key and one authorized client key: the bank's side of the file
// exchange, for `npm start`'s sandbox bank (SANDBOX_BANK=on) and the tests' test bank.

const SSHD = '/usr/sbin/sshd';

export interface SftpServer {
  host: string;
  port: number;
  username: string;
  privateKey: string;
  privateKeyFile: string;
  /** The host key's public line, for clients that pin it. */
  hostKey: string;
  /** The folder the client lands in, with the bank's `inbox` and `outbox`. */
  root: string;
  stop: () => Promise<void>;
}

/**
 * Starts sshd for `dir`: its keys are made there on the first start and kept (a client pins the
 * host key), `dir/bank` is what the client sees. With a `pidFile` the server is `npm start`'s: its
 * own process group, ended by the next start if this one is killed.
 */
export async function startSftpServer(opts: { dir: string; port: number; pidFile?: string; setting?: string }): Promise<SftpServer> {
  if (!fs.existsSync(SSHD)) throw new Error(`${SSHD} not found: install Debian's openssh-server (bash scripts/install-sftp-server.sh)`);
  const root = path.join(opts.dir, 'bank');
  for (const folder of ['inbox', 'outbox']) fs.mkdirSync(path.join(root, folder), { recursive: true });
  const hostKey = path.join(opts.dir, 'host_ed25519');
  const clientKey = path.join(opts.dir, 'client_ed25519');
  for (const key of [hostKey, clientKey]) {
    if (!fs.existsSync(key)) execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  }
  fs.copyFileSync(`${clientKey}.pub`, path.join(opts.dir, 'authorized_keys'));
  const config = path.join(opts.dir, 'sshd_config');
  fs.writeFileSync(config, [
    `Port ${opts.port}`, 'ListenAddress 127.0.0.1', `HostKey ${hostKey}`, `PidFile ${path.join(opts.dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${path.join(opts.dir, 'authorized_keys')}`, 'PubkeyAuthentication yes', 'PasswordAuthentication no',
    'KbdInteractiveAuthentication no', 'PermitRootLogin prohibit-password', 'UsePAM no', 'StrictModes no',
    'Subsystem sftp internal-sftp', `ForceCommand internal-sftp -d ${root}`, 'AllowTcpForwarding no', 'X11Forwarding no',
    'LogLevel ERROR', '',
  ].join('\n'));
  // sshd's privilege separation needs this folder (Debian's service makes it at boot).
  fs.mkdirSync('/run/sshd', { recursive: true });
  const ports = opts.pidFile ? [{ port: opts.port, what: 'The sandbox bank\'s SFTP server', setting: opts.setting ?? 'SANDBOX_BANK_SFTP_PORT' }] : [];
  const server: ServiceProcess = await startServiceProcess({ command: SSHD, args: ['-D', '-e', '-f', config], pidFile: opts.pidFile, ports });
  await waitUntilAnswering(server, `sshd on port ${opts.port}`, () => connects(opts.port), 150);
  return {
    host: '127.0.0.1',
    port: opts.port,
    username: os.userInfo().username,
    privateKey: fs.readFileSync(clientKey, 'utf8'),
    privateKeyFile: clientKey,
    hostKey: fs.readFileSync(`${hostKey}.pub`, 'utf8').trim(),
    root,
    stop: server.stop,
  };
}

function connects(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.end();
      resolve();
    });
    socket.on('error', reject);
  });
}
