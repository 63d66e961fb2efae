import { isEvmChain, type ChainRail } from '../domain/rails';

/** How addresses are compared on a chain (wallets', liquidation addresses'): EVM addresses are hex in either case. */
export const walletAddressKey = (chain: string, address: string) => (isEvmChain(chain as ChainRail) ? address.toLowerCase() : address);

/** Bound parameters per lookup: a page of a busy chain's transfers names thousands of addresses. */
const ADDRESSES_PER_QUERY = 1_000;

/**
 * The rows a lookup finds for these addresses (in their compared form), by address: one indexed
 * query per thousand of them, whatever the number of wallets or routes on the chain.
 */
export async function rowsByAddress<R extends { address: string | null }>(
  keys: string[], lookup: (addresses: string[]) => Promise<R[]>,
): Promise<Map<string, R>> {
  const found = new Map<string, R>();
  for (let i = 0; i < keys.length; i += ADDRESSES_PER_QUERY) {
    for (const row of await lookup(keys.slice(i, i + ADDRESSES_PER_QUERY))) found.set(row.address!, row);
  }
  return found;
}
