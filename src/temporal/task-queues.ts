/**
 * The task queue of the deposit watchers (`watchChainDeposit`), beside the platform's queue. A watcher
 * waits for up to the whole deposit expiry, so each transfer awaiting funds on a chain holds one
 * activity slot for hours: on a queue of their own, with their own slots, they never keep payouts,
 * refunds or micro-deposits waiting.
 */
export const chainWatchTaskQueue = (taskQueue: string) => `${taskQueue}-chain-watch`;

/**
 * The task queue of webhook delivery: each endpoint's loop holds one activity slot while it waits for
 * events, so endpoints never take the slots of payouts and refunds, and a dead one never delays another.
 */
export const webhookTaskQueue = (taskQueue: string) => `${taskQueue}-webhooks`;
