// A coin the platform may spend, and whose coins a spend takes (src/chains/bitcoin/coins.ts).

/** Whose coins a transaction spends: the platform's (treasury and deposit addresses), the sandbox faucet's, or one wallet's. */
export type CoinOwner = { owner: 'platform' } | { owner: 'faucet' } | { owner: 'wallet'; walletId: string };

export interface Coin {
  txid: string;
  vout: number;
  address: string;
  amountSats: bigint;
  keyIndex: number | null;
  /** 0 for a coin a block holds; else how many unconfirmed transactions lead to it (bitcoin_unconfirmed_change). */
  depth: number;
}
