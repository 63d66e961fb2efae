import { hex } from '@scure/base';
import { Transaction } from '@scure/btc-signer';
import { decodeBlock, displayHash } from '../../src/chains/bitcoin/blocks';
import { buildSpend, feeRateOf, NoFreeCoinsError, outputsOf, payeeOutputs, type Coin } from '../../src/chains/bitcoin/coins';
import { feeRateWithin, replacementFeeRate } from '../../src/chains/bitcoin/fees';
import { BITCOIN_NETWORKS, BitcoinKeys, walletBitcoinAddress, walletBitcoinKey } from '../../src/chains/bitcoin/keys';
import { BitcoinRpc } from '../../src/chains/bitcoin/rpc';
import { PayoutRejectedError } from '../../src/chains/chain-adapter';

// Bitcoin's pure parts: keys (BIP-84), raw blocks decoded, coin selection and signing.

const ABANDON = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

test('the platform\'s keys follow BIP-84: its reference mnemonic gives the reference addresses; regtest writes the same keys as bcrt1', () => {
  const mainnet = new BitcoinKeys(ABANDON, 'mainnet');
  expect(mainnet.treasury.address).toBe('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
  expect(mainnet.faucet.address).toBe('bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g');
  const regtest = new BitcoinKeys(ABANDON, 'regtest');
  expect(regtest.treasury.address).toMatch(/^bcrt1q[02-9ac-hj-np-z]{38}$/);
  expect(regtest.deposit(7).index).toBe(1007);
});

test('a wallet\'s Bitcoin key is derived from its sealed key under Bitcoin\'s own label: the same every time, never the same bytes', () => {
  const walletKey = hex.decode('4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318');
  expect(walletBitcoinKey(walletKey)).toEqual(walletBitcoinKey(walletKey));
  expect(hex.encode(walletBitcoinKey(walletKey))).not.toBe(hex.encode(walletKey));
  expect(walletBitcoinAddress(walletKey, 'regtest')).toMatch(/^bcrt1q/);
  expect(walletBitcoinAddress(walletKey, 'mainnet')).toMatch(/^bc1q/);
});

test('the fee rate paid is the node\'s estimate held between BITCOIN_MIN_FEE_RATE and BITCOIN_MAX_FEE_RATE; without an estimate, the floor', () => {
  const limits = { min: 2n, max: 500n };
  expect([undefined, 1n, 2n, 37n, 500n, 501n, 90_000n].map((e) => feeRateWithin(e, limits))).toEqual([2n, 2n, 2n, 37n, 500n, 500n, 500n]);
});

test('a replacement pays half as much again (at least 2 more) or the estimate if higher, never above the ceiling; at the ceiling there is none', () => {
  const limits = { min: 2n, max: 500n };
  expect(replacementFeeRate(2n, 2n, limits)).toBe(4n);
  expect(replacementFeeRate(10n, 3n, limits)).toBe(15n);
  expect(replacementFeeRate(10n, 40n, limits)).toBe(40n);
  expect(replacementFeeRate(400n, 2n, limits)).toBe(500n);
  expect(replacementFeeRate(499n, 900n, limits)).toBe(500n);
  expect(replacementFeeRate(500n, 900n, limits)).toBeUndefined();
  // A payout signed before the ceiling was lowered is never replaced by one paying less.
  expect(replacementFeeRate(700n, 2n, limits)).toBeUndefined();
});

test('a raw block is decoded with its transaction ids: the genesis block', () => {
  const genesis = '0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd7a7b12b27ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4a29ab5f49ffff001d1dac2b7c'
    + '0101000000010000000000000000000000000000000000000000000000000000000000000000ffffffff4d04ffff001d0104455468652054696d65732030332f4a616e2f32303039204368616e63656c6c6f72206f6e206272696e6b206f66207365636f6e64206261696c6f757420666f722062616e6b73ffffffff0100f2052a01000000434104678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5fac00000000';
  expect(displayHash(hex.decode(genesis.slice(0, 160)))).toBe('000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f');
  const block = decodeBlock(genesis, BITCOIN_NETWORKS.mainnet);
  expect(block.prevHash).toBe('0'.repeat(64));
  expect(block.transactions).toEqual([{
    txid: '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b', coinbase: true, inputs: [],
    // Paid to a bare public key: no address.
    outputs: [{ vout: 0, address: null, amountSats: 5_000_000_000n }],
  }]);
});

describe('a spend', () => {
  const keys = new BitcoinKeys(ABANDON, 'regtest');
  const network = BITCOIN_NETWORKS.regtest;
  const coin = (n: number, amountSats: bigint): Coin => ({ txid: n.toString(16).padStart(64, '0'), vout: 0, address: keys.treasury.address, amountSats, keyIndex: 0, depth: 0 });
  const payee = keys.key(5).address;
  const spend = (available: Coin[], amount: bigint, onShort: 'reject' | 'wait' = 'wait') => buildSpend({
    network, outputs: [{ address: payee, amount }], changeAddress: keys.treasury.address, feeRate: 3n, available, privateKeyOf: () => keys.treasury.privateKey(), onShort,
  });

  test('pays the payee, returns change to the treasury, pays at least its fee rate, and signals replace-by-fee on every input', () => {
    const signed = spend([coin(1, 50_000n), coin(2, 2_000_000n)], 1_000_000n);
    const tx = Transaction.fromRaw(hex.decode(signed.raw));
    expect(tx.id).toBe(signed.txid);
    expect(signed.spent.map((c) => c.amountSats)).toEqual([2_000_000n]);
    expect(payeeOutputs(signed.raw, network, keys.treasury.address)).toEqual([{ address: payee, amount: 1_000_000n }]);
    const change = 2_000_000n - 1_000_000n - signed.feeSats;
    // Every output with its index, as the reconciliation reads a payout's transaction from the node.
    expect(outputsOf(signed.raw, network).sort((a, b) => a.vout - b.vout).map((o) => [o.address, o.amount]).sort())
      .toEqual([[payee, 1_000_000n], [keys.treasury.address, change]].sort());
    expect(tx.outputsLength).toBe(2);
    expect([tx.getOutput(0).amount, tx.getOutput(1).amount].sort()).toEqual([1_000_000n, change].sort());
    expect(feeRateOf(signed.raw, signed.spent)).toBeGreaterThanOrEqual(3n);
    for (let i = 0; i < tx.inputsLength; i++) expect(tx.getInput(i).sequence).toBe(0xfffffffd);
  });

  test('coins that cannot cover the amount and its fee: the payout waits (coins held by others come free), a wallet\'s send is refused', () => {
    expect(() => spend([coin(3, 100_000n)], 100_000n)).toThrow(NoFreeCoinsError);
    expect(() => spend([coin(3, 100_000n)], 100_000n, 'reject')).toThrow(PayoutRejectedError);
  });
});

test('a block height the node answers it has not is no block (a shorter chain); a node that does not answer is an error, never a missing block', async () => {
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const { id, params } = JSON.parse(body) as { id: number; params: [number] };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(params[0] <= 10 ? { id, result: 'ab'.repeat(32), error: null } : { id, result: null, error: { code: -1, message: 'Block number out of range' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  try {
    const rpc = new BitcoinRpc(`http://user:pass@127.0.0.1:${port}`);
    expect(await rpc.blockHashIfAny(10)).toBe('ab'.repeat(32));
    expect(await rpc.blockHashIfAny(11)).toBeNull();
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  await expect(new BitcoinRpc(`http://user:pass@127.0.0.1:${port}`).blockHashIfAny(11)).rejects.toThrow();
});
