import { encodeFunctionData, getAddress } from 'viem';
import type { ChainKeys } from './keys';
import { stablecoinAbi, type EvmNode } from './node';

/** One issuer transaction at a time per chain in this process, so nonces do not collide. */
const issuerLock = {
  tails: new Map<string, Promise<unknown>>(),
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const next = (this.tails.get(key) ?? Promise.resolve()).then(fn, fn);
    this.tails.set(key, next.catch(() => undefined));
    return next;
  },
};

/** What a sandbox wallet is topped up to in the native asset, for the gas of its own transfers (0.01). */
const SANDBOX_GAS_MONEY = 10n ** 16n;

/**
 * Sandbox: the issuer mints the amount to the address, which shows on chain as a Transfer to it;
 * with `gasMoney`, it also sends native asset up to SANDBOX_GAS_MONEY (a wallet pays its own gas).
 */
export function mintSandboxDeposit(
  node: EvmNode, keys: ChainKeys, q: { currency: string; address: string; amountMinor: bigint; gasMoney?: boolean },
): Promise<{ txHash: string }> {
  return issuerLock.run(node.chain, async () => {
    const issuer = keys.issuer;
    const [fees, chainId, nonce] = await Promise.all([
      node.client.estimateFeesPerGas(), node.getChainId(), node.client.getTransactionCount({ address: issuer.address, blockTag: 'pending' }),
    ]);
    // The gas money first: the tokens are mined with it or after it, so once they count, so does the gas.
    let next = nonce;
    if (q.gasMoney) {
      const held = await node.client.getBalance({ address: getAddress(q.address) });
      if (held < SANDBOX_GAS_MONEY) {
        const gas = await issuer.signTransaction({
          type: 'eip1559', chainId, nonce: next++, to: getAddress(q.address), value: SANDBOX_GAS_MONEY - held, gas: 21_000n,
          maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        });
        await node.client.sendRawTransaction({ serializedTransaction: gas });
      }
    }
    const signed = await issuer.signTransaction({
      type: 'eip1559', chainId, nonce: next, to: await node.token(q.currency), gas: 120_000n,
      data: encodeFunctionData({ abi: stablecoinAbi, functionName: 'mint', args: [getAddress(q.address), q.amountMinor] }),
      maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    const hash = await node.client.sendRawTransaction({ serializedTransaction: signed });
    await node.client.waitForTransactionReceipt({ hash, pollingInterval: 200 });
    return { txHash: hash };
  });
}
