import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { localKeyVault, type KeyVault } from '../keys/key-vault';
import { KeyShare } from '../mpc/dkls23';

// Where the customer's signer keeps its device share (party 2) of each MPC wallet: one file per
// wallet, sealed (AWS Encryption SDK envelope) under the signer's own key — MPC_SIGNER_KEK, or a key
// made once in the store's directory (mode 0600). The platform never sees either.

export class ShareStore {
  private readonly vault: KeyVault;

  constructor(readonly dir: string, kek?: Buffer) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.vault = localKeyVault({ kek, dataDir: dir, allowGenerated: true });
  }

  private file(walletId: string) {
    if (!/^wal_[0-9A-Za-z]+$/.test(walletId)) throw new Error(`not a wallet id: ${walletId}`);
    return path.join(this.dir, `${walletId}.share`);
  }

  async save(walletId: string, share: KeyShare): Promise<void> {
    const bytes = share.toBytes();
    const sealed = await this.vault.seal(bytes, { purpose: 'mpc-device-share', wallet_id: walletId });
    bytes.fill(0);
    writeFileSync(this.file(walletId), sealed, { mode: 0o600 });
  }

  async load(walletId: string): Promise<KeyShare> {
    const file = this.file(walletId);
    if (!existsSync(file)) throw new Error(`this signer holds no share of ${walletId} (${this.dir})`);
    const bytes = await this.vault.open(readFileSync(file, 'utf8'), { purpose: 'mpc-device-share', wallet_id: walletId });
    try {
      return KeyShare.fromBytes(bytes);
    } finally {
      bytes.fill(0);
    }
  }

  wallets(): string[] {
    return readdirSync(this.dir).filter((f) => f.endsWith('.share')).map((f) => f.slice(0, -'.share'.length));
  }
}
