// The customer's MPC signer: `npm run signer -- <command>` (docs/MPC.md). Talks to the platform's API
// with the customer's API key (PLATFORM_API_URL, PLATFORM_API_KEY); keeps device shares in
// MPC_SIGNER_DIR, sealed under MPC_SIGNER_KEK (or a key made once in that directory).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { newRecoveryKey } from '../mpc/channel';
import { PlatformApi } from '../signer/client';
import { broadcast, unsignedTokenTransfer } from '../signer/recovery';
import { ShareStore } from '../signer/share-store';
import { MpcSigner } from '../signer/signer';

const USAGE = `Usage: npm run signer -- <command>
  recovery-key --out FILE        make a recovery key pair: the private key goes to FILE (keep it
                                 offline), the public key is printed (give it to create-wallet)
  create-wallet --customer cus_… --chains ethereum,base --recovery-public-key KEY --backup-out FILE [--label L]
                                 create an MPC wallet: key generation with the platform; the device
                                 share stays in MPC_SIGNER_DIR, the backup share goes to FILE, sealed
                                 to the recovery key
  pending                        signing requests waiting for this signer
  cosign wal_… mpcs_… [--backup FILE --recovery-key FILE]
                                 check and co-sign a request with the platform (with --backup: the
                                 backup share signs instead of the device's, for a lost device)
  cosign --all                   co-sign every pending request
  recover-send wal_… --backup FILE --recovery-key FILE --rpc URL --token 0x… --currency usdc --to 0x… --amount N
                                 without the platform: device + backup shares sign a token transfer,
                                 sent to the chain's node at URL`;

/**
 * The signer with its share store. Commands that call the platform need its API key; recovery
 * (`offline`) never calls it, so it runs without one, when the platform is gone.
 */
function signer(opts: { offline?: boolean } = {}): MpcSigner {
  const apiKey = process.env.PLATFORM_API_KEY;
  if (!apiKey && !opts.offline) throw new Error('PLATFORM_API_KEY is required (the API key the signer acts with)');
  const kek = process.env.MPC_SIGNER_KEK ? Buffer.from(process.env.MPC_SIGNER_KEK, 'base64') : undefined;
  const store = new ShareStore(process.env.MPC_SIGNER_DIR ?? path.join(process.cwd(), '.data', 'mpc-signer'), kek);
  return new MpcSigner(new PlatformApi(process.env.PLATFORM_API_URL ?? 'http://127.0.0.1:3000', apiKey ?? ''), store);
}

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new Error(`--${name} is required\n\n${USAGE}`);
  return value;
}

const backupOf = (values: Record<string, unknown>) => (values.backup
  ? { sealed: readFileSync(required(values, 'backup'), 'utf8'), recoveryPrivateKey: readFileSync(required(values, 'recovery-key'), 'utf8').trim() }
  : undefined);

async function main(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...Object.fromEntries(['out', 'customer', 'chains', 'recovery-public-key', 'backup-out', 'label', 'backup', 'recovery-key', 'rpc', 'token', 'currency', 'to', 'amount']
        .map((o) => [o, { type: 'string' as const }])),
      all: { type: 'boolean' },
    },
  }) as { values: Record<string, string | boolean | undefined>; positionals: string[] };
  const [command, ...rest] = positionals;
  switch (command) {
    case 'recovery-key': {
      const key = await newRecoveryKey();
      writeFileSync(required(values, 'out'), `${key.privateKey}\n`, { mode: 0o600, flag: 'wx' });
      console.log(key.publicKey);
      return;
    }
    case 'create-wallet': {
      const { wallet, backup } = await signer().createWallet({
        customerId: required(values, 'customer'), chains: required(values, 'chains').split(','), label: values.label as string | undefined,
        recoveryPublicKey: required(values, 'recovery-public-key'),
      });
      writeFileSync(required(values, 'backup-out'), backup, { mode: 0o600, flag: 'wx' });
      console.log(JSON.stringify(wallet, null, 2));
      return;
    }
    case 'pending':
      console.log(JSON.stringify((await signer().pendingRequests()).map((s) => ({ wallet_id: s.wallet_id, session_id: s.id, transfer_id: s.transfer_id, transaction: s.transaction, expires_at: s.expires_at })), null, 2));
      return;
    case 'cosign': {
      const s = signer();
      const requests = values.all ? (await s.pendingRequests()).map((r) => [r.wallet_id, r.id] as const) : [[rest[0], rest[1]] as const];
      for (const [walletId, sessionId] of requests) {
        if (!walletId || !sessionId) throw new Error(`cosign takes a wallet and a session id, or --all\n\n${USAGE}`);
        const signature = await s.cosign(walletId, sessionId, { backup: backupOf(values) });
        console.log(`${sessionId}: signed (r ${signature.r})`);
      }
      return;
    }
    case 'recover-send': {
      const walletId = rest[0];
      if (!walletId) throw new Error(`recover-send takes a wallet id\n\n${USAGE}`);
      const backup = backupOf(values);
      if (!backup) {
        throw new Error('recover-send signs with two of the wallet\'s three shares, without the platform: the device share (kept by this signer) '
          + 'and the backup share (--backup FILE, opened with --recovery-key FILE). Only the device share is here: give --backup and --recovery-key.');
      }
      const s = signer({ offline: true });
      const rpc = required(values, 'rpc');
      const unsigned = await unsignedTokenTransfer({
        rpcUrl: rpc, from: await s.addressOf(walletId), token: required(values, 'token'), currency: required(values, 'currency'), to: required(values, 'to'), amount: required(values, 'amount'),
      });
      const { signed } = await s.signWithoutPlatform(walletId, unsigned, backup);
      console.log(await broadcast(rpc, signed));
      return;
    }
    default:
      console.error(USAGE);
      process.exitCode = command ? 2 : 0;
  }
}

main(process.argv.slice(2)).catch((err) => {
  console.error((err as Error).message);
  process.exitCode = 1;
});
