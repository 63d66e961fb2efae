import { timingSafeEqual } from 'node:crypto';
import net from 'node:net';
import SftpClient from 'ssh2-sftp-client';
import { sha256Hex } from '../../crypto';

/**
 * Where and how the platform exchanges files with its bank: an SFTP account on the bank's server,
 * with a key of ours, the bank's host key pinned (no trust on first use), an inbox the bank reads
 * and an outbox it writes (returns, notifications of change, incoming credits, status reports).
 */
export interface SftpChannelSettings {
  host: string;
  port: number;
  username: string;
  /** Our private key (OpenSSH format). */
  privateKey: string;
  /** The bank's host key as an OpenSSH public key line (`ssh-ed25519 AAAA… [comment]`). */
  hostKey: string;
  inbox: string;
  outbox: string;
}

/** A file the bank has put in the outbox: its name and size. */
export interface BankFileListing {
  name: string;
  size: number;
}

/** A file of that name is already in the inbox with other bytes: it is never overwritten. */
export class BankFileConflictError extends Error {}

/** The key blob of an OpenSSH public key line, as the server presents it during the handshake. */
function hostKeyBlob(line: string): Buffer {
  const [, base64] = line.trim().split(/\s+/);
  if (!base64) throw new Error('the bank host key must be an OpenSSH public key line (type, base64 key, optional comment)');
  return Buffer.from(base64, 'base64');
}

/** How long a connection may take to open and finish its SSH handshake. */
const CONNECT_TIMEOUT_MS = 15_000;

/**
 * A TCP connection to the bank's server with Nagle's algorithm off. SFTP is request and answer in
 * small packets: with Nagle on, each waited for the peer's delayed acknowledgement (40 ms on Linux),
 * which made a handshake about 400 ms and every stat or rename 44 ms.
 */
export function connectWithoutDelay(host: string, port: number, timeoutMs = CONNECT_TIMEOUT_MS): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port, noDelay: true });
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    socket.setTimeout(timeoutMs, () => fail(new Error(`connecting to ${host}:${port} timed out after ${timeoutMs} ms`)));
    socket.once('error', fail);
    socket.once('connect', () => {
      socket.setTimeout(0);
      socket.off('error', fail);
      resolve(socket);
    });
  });
}

/**
 * The file exchange over SFTP. Uploads are idempotent by name: the bytes go to `name.part` and are
 * renamed into place (the bank never reads half a file); an upload repeated after a crash finds the
 * file in place with the same bytes and does nothing, and a different file under a name already
 * used is refused. Each call opens and closes its own connection: windows and outbox reads are
 * seconds to minutes apart.
 */
export class SftpChannel {
  private readonly pinnedHostKey: Buffer;

  constructor(private readonly settings: SftpChannelSettings) {
    this.pinnedHostKey = hostKeyBlob(settings.hostKey);
  }

  private async session<T>(work: (client: SftpClient) => Promise<T>): Promise<T> {
    const sock = await connectWithoutDelay(this.settings.host, this.settings.port);
    const client = new SftpClient('bank-files');
    try {
      await client.connect({
        sock,
        host: this.settings.host,
        port: this.settings.port,
        username: this.settings.username,
        privateKey: this.settings.privateKey,
        readyTimeout: CONNECT_TIMEOUT_MS,
        hostVerifier: (key: Buffer) => key.length === this.pinnedHostKey.length && timingSafeEqual(key, this.pinnedHostKey),
      });
    } catch (err) {
      sock.destroy();
      throw err;
    }
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }

  /** Puts `bytes` in the inbox as `name`, once: `uploaded` false when the same file was there already. */
  upload(name: string, bytes: Buffer): Promise<{ uploaded: boolean; sha256: string }> {
    const sha256 = sha256Hex(bytes);
    const target = `${this.settings.inbox}/${name}`;
    return this.session(async (client) => {
      if (await client.exists(target)) {
        const present = (await client.get(target)) as Buffer;
        if (sha256Hex(present) === sha256) return { uploaded: false, sha256 };
        throw new BankFileConflictError(`${name} is already in the bank's inbox with other contents: not overwritten`);
      }
      const part = `${target}.part`;
      await client.put(bytes, part);
      await client.rename(part, target);
      return { uploaded: true, sha256 };
    });
  }

  /**
   * Reads the bank's outbox over one connection: of the files waiting there (oldest name first, the
   * bank's partial uploads left out), `select` picks those to read, and `read` gets each whole, one
   * after another.
   */
  readOutbox(select: (listed: BankFileListing[]) => Promise<string[]>, read: (name: string, bytes: Buffer) => Promise<void>): Promise<void> {
    return this.session(async (client) => {
      const listed = (await client.list(this.settings.outbox))
        .filter((f) => f.type === '-' && !f.name.endsWith('.part'))
        .map((f) => ({ name: f.name, size: f.size }))
        .sort((a, b) => a.name.localeCompare(b.name));
      for (const name of await select(listed)) await read(name, (await client.get(`${this.settings.outbox}/${name}`)) as Buffer);
    });
  }
}
