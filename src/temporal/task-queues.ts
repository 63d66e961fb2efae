/**
 * The task queue of the deposit watchers (`watchChainDeposit`), beside the platform's queue. A watcher
 * waits for up to the whole deposit expiry, so each transfer awaiting funds on a chain holds one
 * activity slot for hours: on a queue of their own, with their own slots, they never keep payouts,
 * refunds or micro-deposits waiting.
 */
export const chainWatchTaskQueue = (taskQueue: string) => `${taskQueue}-chain-watch`;
