import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { ALL_SEARCH_ATTRIBUTES } from '../../src/temporal/search-attributes';

// Pure logic: configuration parsing and its error messages.

test('defaults give the embedded stack', () => {
  const c = loadConfig({});
  expect(c.PORT).toBe(3000);
  expect(c.DATABASE_URL).toBeUndefined();
  expect(c.TEMPORAL_ADDRESS).toBeUndefined();
  expect(c.publicBaseUrl).toBe('http://localhost:3000');
  expect(c.SANDBOX_TIME_SCALE).toBe(1);
  expect(c.WORKFLOW_ANSWER_TIMEOUT_SECONDS).toBe(10);
  expect(c.dataDir).toMatch(/\.data$/);
});

test('each bad value is named with what is expected', () => {
  expect(() =>
    loadConfig({
      PORT: 'eighty', DATABASE_URL: 'mysql://x', TEMPORAL_ADDRESS: 'localhost', REDIS_URL: 'http://r',
      SANDBOX_TIME_SCALE: '0', DATA_ENCRYPTION_KEY: 'c2hvcnQ=', LOG_LEVEL: 'loud',
    }),
  ).toThrow(ConfigError);
  try {
    loadConfig({
      PORT: 'eighty', DATABASE_URL: 'mysql://x', TEMPORAL_ADDRESS: 'localhost', DATA_ENCRYPTION_KEY: 'c2hvcnQ=',
      DATA_ENCRYPTION_PREVIOUS_KEYS: `${Buffer.alloc(32, 1).toString('base64')},c2hvcnQ=`, STRAY_DEPOSIT_SCAN_SECONDS: '0',
      WORKFLOW_ANSWER_TIMEOUT_SECONDS: '0',
    });
  } catch (err) {
    const message = (err as Error).message;
    expect(message).toContain('PORT:');
    expect(message).toContain('DATABASE_URL: must start with postgres://');
    expect(message).toContain('TEMPORAL_ADDRESS: must be host:port');
    expect(message).toContain('DATA_ENCRYPTION_KEY: must be 32 bytes');
    expect(message).toContain('DATA_ENCRYPTION_PREVIOUS_KEYS: must be keys of 32 bytes');
    expect(message).toContain('STRAY_DEPOSIT_SCAN_SECONDS:');
    expect(message).toContain('WORKFLOW_ANSWER_TIMEOUT_SECONDS:');
  }
  expect(loadConfig({ DATA_ENCRYPTION_PREVIOUS_KEYS: ` ${Buffer.alloc(32, 1).toString('base64')} , ` }).DATA_ENCRYPTION_PREVIOUS_KEYS).toEqual([Buffer.alloc(32, 1)]);
});

test('the rail provider webhook secret is long enough, or unset (empty is unset, as docker-compose passes it)', () => {
  expect(() => loadConfig({ RAIL_WEBHOOK_SECRET: 'short' })).toThrow(/RAIL_WEBHOOK_SECRET: must be at least 32 characters/);
  expect(loadConfig({ RAIL_WEBHOOK_SECRET: '' }).RAIL_WEBHOOK_SECRET).toBeUndefined();
  expect(loadConfig({ RAIL_WEBHOOK_SECRET: 'a'.repeat(32) }).RAIL_WEBHOOK_SECRET).toBe('a'.repeat(32));
});

test('PUBLIC_BASE_URL loses a trailing slash', () => {
  expect(loadConfig({ PUBLIC_BASE_URL: 'https://pay.example.com/' }).publicBaseUrl).toBe('https://pay.example.com');
});

test('chain and transfer settings are parsed and checked', () => {
  const c = loadConfig({
    EVM_RPC_URLS: 'ethereum=http://127.0.0.1:8545, base=https://base.example/rpc', SANDBOX_FX_RATES: 'eur=1.10,gbp=1.3',
    CHAIN_TREASURY_MNEMONIC: 'legal winner thank year wave sausage worth useful legal winner thank yellow',
  });
  expect(c.EVM_RPC_URLS).toEqual({ ethereum: 'http://127.0.0.1:8545', base: 'https://base.example/rpc' });
  expect(c.SANDBOX_FX_RATES).toEqual({ eur: '1.10', gbp: '1.3' });
  expect(c.EVM_CONFIRMATIONS).toBe(2);
  expect(() => loadConfig({ EVM_RPC_URLS: 'bitcoin=http://x' })).toThrow(/EVM_RPC_URLS: 'bitcoin=http:\/\/x' is not chain=http\(s\):\/\/url/);
  expect(() => loadConfig({ SANDBOX_FX_RATES: 'eur=abc' })).toThrow(/SANDBOX_FX_RATES: 'eur=abc' is not currency=rate/);
  expect(() => loadConfig({ CHAIN_TREASURY_MNEMONIC: 'too short' })).toThrow(/CHAIN_TREASURY_MNEMONIC: must be a BIP-39 mnemonic/);
  expect(loadConfig({ TRANSFER_DEPOSIT_EXPIRY_HOURS: '720' }).TRANSFER_DEPOSIT_EXPIRY_HOURS).toBe(720);
  expect(() => loadConfig({ TRANSFER_DEPOSIT_EXPIRY_HOURS: '721' })).toThrow(/TRANSFER_DEPOSIT_EXPIRY_HOURS:/);
});

test('docs/DEPLOYMENT.md names every search attribute the workflows set (Temporal Cloud registers them by hand)', () => {
  const text = readFileSync(path.join(__dirname, '../..', 'docs/DEPLOYMENT.md'), 'utf8');
  const registered = /for a in ([\w ]+); do/.exec(text)![1].split(' ');
  expect(registered.sort()).toEqual(ALL_SEARCH_ATTRIBUTES.map((a) => a.name).sort());
});

test('the chain seed is checked, and anvil\'s public one is refused for chains that are not local', () => {
  const anvilMnemonic = 'test test test test test test test test test test test junk';
  expect(loadConfig({}).CHAIN_TREASURY_MNEMONIC).toBe(anvilMnemonic);
  expect(loadConfig({ EVM_RPC_URLS: 'ethereum=http://127.0.0.1:8545,base=http://localhost:8549' }).CHAIN_TREASURY_MNEMONIC).toBe(anvilMnemonic);
  expect(() => loadConfig({ EVM_RPC_URLS: 'ethereum=http://127.0.0.1:8545,base=https://base.example.com' }))
    .toThrow(/CHAIN_TREASURY_MNEMONIC: must be the platform's own seed: EVM_RPC_URLS, SOLANA_RPC_URL or BITCOIN_RPC_URL points base at a node that is not local/);
  // One word changed: the checksum no longer holds.
  expect(() => loadConfig({ CHAIN_TREASURY_MNEMONIC: 'test test test test test test test test test test test test' }))
    .toThrow(/CHAIN_TREASURY_MNEMONIC: must be a BIP-39 mnemonic \(English words separated by single spaces, valid checksum\)/);
  const own = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
  expect(loadConfig({ EVM_RPC_URLS: 'base=https://base.example.com', CHAIN_TREASURY_MNEMONIC: own }).CHAIN_TREASURY_MNEMONIC).toBe(own);
  // Other spacing would derive other keys: refused rather than rewritten.
  expect(() => loadConfig({ CHAIN_TREASURY_MNEMONIC: own.replace(' ', '  ') })).toThrow(/CHAIN_TREASURY_MNEMONIC: must be a BIP-39 mnemonic/);
});

test('stablecoin contracts of remote chains are named per chain and currency, with checksummed addresses', () => {
  const usdc = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
  expect(loadConfig({ EVM_TOKEN_ADDRESSES: `ethereum.usdc=${usdc}, base.usdt=${usdc.toLowerCase()}` }).EVM_TOKEN_ADDRESSES)
    .toEqual({ ethereum: { usdc }, base: { usdt: usdc } });
  expect(loadConfig({}).EVM_TOKEN_ADDRESSES).toEqual({});
  for (const bad of [`base.dai=${usdc}`, `solana.usdc=${usdc}`, 'ethereum.usdc=0x1234', `ethereum.usdc=${usdc.replace('A0b8', 'a0B8')}`, `usdc=${usdc}`]) {
    expect(() => loadConfig({ EVM_TOKEN_ADDRESSES: bad })).toThrow(new RegExp(`EVM_TOKEN_ADDRESSES: '${bad.replace(/[.]/g, '\\.')}' is not chain\\.currency=0xaddress`));
  }
});

describe('the bank-file rails (RAIL_PROVIDERS)', () => {
  const sftp = { BANK_SFTP_HOST: 'sftp.bank.example', BANK_SFTP_USER: 'platform', BANK_SFTP_PRIVATE_KEY_FILE: '/keys/bank', BANK_SFTP_HOST_KEY: 'ssh-ed25519 AAAA' };
  const ach = { ACH_ODFI_ROUTING: '091000019', ACH_ODFI_NAME: 'ODFI', ACH_COMPANY_ID: '1234567890', ACH_COMPANY_NAME: 'PLATFORM', ACH_COLLECTION_ACCOUNT: '9000012345' };
  const message = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return '';
    } catch (err) {
      return (err as Error).message;
    }
  };

  test('each rail names the settings it needs, and only those', () => {
    const achOnly = message({ RAIL_PROVIDERS: 'ach=bank_files' });
    for (const key of [...Object.keys(sftp), ...Object.keys(ach)]) expect(achOnly).toContain(`${key}: is required`);
    expect(achOnly).not.toContain('SEPA_DEBTOR_IBAN');
    const sepa = message({ RAIL_PROVIDERS: 'sepa=bank_files', ...sftp });
    expect(sepa).toContain('SEPA_DEBTOR_IBAN: is required');
    expect(sepa).not.toContain('ACH_ODFI_ROUTING');
    const c = loadConfig({ RAIL_PROVIDERS: 'ach=bank_files, ach_same_day=bank_files', ...sftp, ...ach });
    expect(c.RAIL_PROVIDERS).toEqual({ ach: 'bank_files', ach_same_day: 'bank_files' });
    expect(c.ACH_SAME_DAY_WINDOWS).toEqual(['15 10 * * 1-5', '30 14 * * 1-5', '30 16 * * 1-5']);
  });

  test('a rail without a file interface, a bad value, or sandbox files beside live ones are refused by name', () => {
    expect(message({ RAIL_PROVIDERS: 'wire=bank_files' })).toContain("RAIL_PROVIDERS: 'wire=bank_files' is not rail=bank_files");
    expect(message({ RAIL_PROVIDERS: 'ach=bank_files', ...sftp, ...ach, ACH_ODFI_ROUTING: '12345' })).toContain('ACH_ODFI_ROUTING: must be 9 digits');
    expect(message({ ACH_STANDARD_WINDOWS: '0 17 * *' })).toContain('ACH_STANDARD_WINDOWS:');
    expect(message({ RAIL_PROVIDERS: 'ach=bank_files', ...sftp, ...ach, SANDBOX_BANK_FILES: 'on' }))
      .toContain('SANDBOX_BANK_FILES: cannot be on while RAIL_PROVIDERS sends live payments to the bank');
    expect(message({ RAIL_PROVIDERS: 'ach=bank_files', ...sftp, ...ach, SANDBOX_BANK: 'on' }))
      .toContain('SANDBOX_BANK: cannot be on while RAIL_PROVIDERS sends live payments to the bank');
  });

  test('the sandbox bank asks for nothing more: npm start fills in its server, ODFI and account', () => {
    const c = loadConfig({ SANDBOX_BANK: 'on', SANDBOX_BANK_FILES: 'on' });
    expect([c.SANDBOX_BANK, c.SANDBOX_BANK_SFTP_PORT, c.SANDBOX_BANK_POLL_SECONDS, c.BANK_SFTP_HOST]).toEqual(['on', 2222, 2, undefined]);
  });
});

test('solana: its RPC address, the mints off mainnet, and the public seed refused for a cluster that is not local', () => {
  expect(loadConfig({ SOLANA_RPC_URL: 'http://127.0.0.1:8899' }).SOLANA_RPC_URL).toBe('http://127.0.0.1:8899');
  expect(() => loadConfig({ SOLANA_RPC_URL: 'https://api.mainnet-beta.solana.com' }))
    .toThrow(/CHAIN_TREASURY_MNEMONIC: must be the platform's own seed: EVM_RPC_URLS, SOLANA_RPC_URL or BITCOIN_RPC_URL points solana at a node that is not local/);
  expect(loadConfig({ SOLANA_TOKEN_MINTS: 'usdc=4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU' }).SOLANA_TOKEN_MINTS)
    .toEqual({ usdc: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU' });
  expect(() => loadConfig({ SOLANA_TOKEN_MINTS: 'dai=4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU' })).toThrow(/SOLANA_TOKEN_MINTS: 'dai=.*' is not currency=<base58 mint> for usdc\/usdt/);
  expect(() => loadConfig({ SOLANA_DEPOSIT_COMMITMENT: 'processed' })).toThrow(/SOLANA_DEPOSIT_COMMITMENT/);
});

test('bitcoin: its node address, network and fee policy; the public seed refused for a node that is not local', () => {
  const c = loadConfig({ BITCOIN_RPC_URL: 'http://user:pass@127.0.0.1:18443' });
  expect([c.BITCOIN_RPC_URL, c.BITCOIN_CONFIRMATIONS, c.BITCOIN_MIN_FEE_RATE, c.BITCOIN_MAX_FEE_RATE, c.BITCOIN_NETWORK]).toEqual(['http://user:pass@127.0.0.1:18443', 6, 2, 1000, undefined]);
  expect(() => loadConfig({ BITCOIN_RPC_URL: 'https://user:pass@btc.example.com' }))
    .toThrow(/CHAIN_TREASURY_MNEMONIC: must be the platform's own seed: EVM_RPC_URLS, SOLANA_RPC_URL or BITCOIN_RPC_URL points bitcoin at a node that is not local/);
  expect(() => loadConfig({ BITCOIN_NETWORK: 'signet' })).toThrow(/BITCOIN_NETWORK/);
  expect(() => loadConfig({ BITCOIN_MIN_FEE_RATE: '0' })).toThrow(/BITCOIN_MIN_FEE_RATE/);
  expect(() => loadConfig({ BITCOIN_MIN_FEE_RATE: '20', BITCOIN_MAX_FEE_RATE: '10' })).toThrow(/BITCOIN_MAX_FEE_RATE: must be at least BITCOIN_MIN_FEE_RATE \(20\)/);
});
