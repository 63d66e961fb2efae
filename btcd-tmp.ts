import { startBitcoinNode } from './src/embedded/bitcoin';
import { BitcoinRpc } from './src/chains/bitcoin/rpc';
const M = 'test test test test test test test test test test test junk';
(async () => {
  const dir = '/tmp/btcd-flush-test';
  let n = await startBitcoinNode({ port: 28443, mnemonic: M, stateDir: dir, blockMs: 0 });
  let rpc = new BitcoinRpc(n.url);
  await rpc.call('generate', [800]);
  const before = await rpc.blockCount();
  const t0 = Date.now();
  await n.stop();
  console.log('tip before', before, 'stop took', Date.now() - t0, 'ms');
  n = await startBitcoinNode({ port: 28443, mnemonic: M, stateDir: dir, blockMs: 0 });
  rpc = new BitcoinRpc(n.url);
  console.log('tip after', await rpc.blockCount());
  await n.stop();
})();
