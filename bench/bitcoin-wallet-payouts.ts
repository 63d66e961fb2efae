// `npm run bench:bitcoin-wallet-payouts`: one bitcoin wallet funded by one coin pays BENCH_PAYOUTS
// (default 100) transfers to outside addresses (issue 63). Each send spends the unconfirmed change of
// the one before, up to a node's chain of 25 (docs/WALLETS.md), so the sends need ⌈N / 25⌉ blocks. The
// bench is the block clock: it mines a block only once no new send has been signed for
// BENCH_QUIET_MS (default 65 s, more than a waiting send's longest retry interval), and prints how many blocks held the wallet's sends, and that every
// transfer reached payment_processed.
import { sql } from 'kysely';
import { BitcoinRpc } from '../src/chains/bitcoin/rpc';
import { outsideAddress } from '../test/harness/bitcoin';
import { withTransferStack } from './transfer-stack';

const PAYOUTS = Number(process.env.BENCH_PAYOUTS ?? 100);
// Longer than a waiting send's longest retry interval (1 minute): every send that can go has gone before the next block.
const QUIET_MS = Number(process.env.BENCH_QUIET_MS ?? 65_000);
const AMOUNT = '0.01';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  await withTransferStack('bench-bitcoin-wallet-payouts', async ({ db, api, customerId, processEnv }) => {
    const rpc = new BitcoinRpc(processEnv.BITCOIN_RPC_URL!);
    const wallet = (await api.post('/v0/wallets', { customer_id: customerId, type: 'custodial', chains: ['bitcoin'] })).body;
    const funding = (PAYOUTS * 0.0101 + 0.01).toFixed(8);
    if ((await api.post(`/v0/sandbox/wallets/${wallet.id}/fund`, { chain: 'bitcoin', currency: 'btc', amount: funding })).status !== 200) throw new Error('funding refused');
    for (;;) {
      await rpc.call('generate', [1]);
      const b = (await api.get(`/v0/wallets/${wallet.id}/balances`)).body.data.find((x: any) => x.currency === 'btc');
      if (b && b.balance === Number(funding).toFixed(8)) break;
      await sleep(200);
    }
    const coins = await db.selectFrom('bitcoin_outputs').select('txid').where('wallet_id', '=', wallet.id).where('spent_txid', 'is', null).execute();
    console.log(`wallet ${wallet.id}: ${funding} btc in ${coins.length} coin(s)`);

    const ids: string[] = [];
    for (let i = 0; i < PAYOUTS; i += 10) {
      const batch = await Promise.all(Array.from({ length: Math.min(10, PAYOUTS - i) }, () => api.post('/v0/transfers', {
        amount: AMOUNT, on_behalf_of: customerId, source: { payment_rail: 'bitcoin', currency: 'btc', wallet_id: wallet.id },
        destination: { payment_rail: 'bitcoin', currency: 'btc', to_address: outsideAddress() },
      })));
      for (const r of batch) {
        if (r.status !== 201) throw new Error(`transfer refused: ${r.status} ${JSON.stringify(r.body.error)}`);
        ids.push(r.body.id);
      }
    }
    const started = Date.now();
    const sendBlocks = await mineSendsOut(db, rpc, ids);
    console.log(`the ${PAYOUTS} wallet sends were mined in ${sendBlocks.length} block(s) (heights ${sendBlocks.join(', ')})`);
    // Then a block a second until every payout from the treasury is processed.
    for (;;) {
      const { rows } = await sql<{ n: string }>`select count(*)::text as n from transfers where id in (${sql.join(ids)}) and state = 'payment_processed'`.execute(db);
      if (Number(rows[0]!.n) === PAYOUTS) break;
      const stuck = await sql<{ n: string }>`select count(*)::text as n from transfers where id in (${sql.join(ids)}) and state in ('canceled', 'refunded')`.execute(db);
      if (Number(stuck.rows[0]!.n) > 0) throw new Error(`${stuck.rows[0]!.n} transfers were canceled or refunded`);
      await rpc.call('generate', [1]);
      await sleep(1_000);
    }
    console.log(`all ${PAYOUTS} transfers payment_processed, ${((Date.now() - started) / 1000).toFixed(1)} s after the last was created`);
  });
}

/** Mines a block each time the wallet's sends stop coming for QUIET_MS; answers the heights that hold them. */
async function mineSendsOut(db: Parameters<Parameters<typeof withTransferStack>[1]>[0]['db'], rpc: BitcoinRpc, ids: string[]): Promise<number[]> {
  let last = -1;
  let quietSince = Date.now();
  for (;;) {
    const sends = await db.selectFrom('wallet_signed_transactions').select('tx_hash').where('transfer_id', 'in', ids).execute();
    const mined = sends.length === 0 ? [] : await db.selectFrom('bitcoin_outputs').select('height').distinct()
      .where('txid', 'in', sends.map((s) => s.tx_hash!)).execute();
    const minedSends = sends.length === 0 ? 0 : (await db.selectFrom('bitcoin_outputs').select('txid').distinct()
      .where('txid', 'in', sends.map((s) => s.tx_hash!)).execute()).length;
    if (minedSends === ids.length) return mined.map((m) => m.height).sort((a, b) => a - b);
    if (sends.length !== last) {
      last = sends.length;
      quietSince = Date.now();
    } else if (Date.now() - quietSince >= QUIET_MS) {
      await rpc.call('generate', [1]);
      quietSince = Date.now();
    }
    await sleep(250);
  }
}

void main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});
