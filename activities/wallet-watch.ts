import { Context, sleep } from '@temporalio/activity';
import type { ChainAdapters } from '../src/chains';
import type { Db } from '../src/db';
import type { ChainRail } from '../src/domain/rails';
import { followWalletTransfers } from '../src/wallets/watcher';

/** The wallet watchers' activity (src/wallets/watcher.ts), on the chain-watch task queue: it holds its slot while it waits. */
export function createWalletWatchActivities(deps: { db: Db; chains: ChainAdapters; pollMs: number; routes?: Parameters<typeof followWalletTransfers>[0]['routes'] }) {
  return {
    /** Looks at the chain every poll interval for `maxWaitMs`, heartbeating; answers what it recorded and settled. */
    async watchWalletTransfers(input: { chain: string; maxWaitMs: number }): Promise<{ recorded: number; settled: number }> {
      const until = Date.now() + input.maxWaitMs;
      const total = { recorded: 0, settled: 0 };
      const beat = () => Context.current().heartbeat();
      for (;;) {
        const look = await followWalletTransfers(deps, input.chain as ChainRail, beat);
        total.recorded += look.recorded;
        total.settled += look.settled;
        beat();
        if (Date.now() + deps.pollMs >= until) return total;
        await sleep(deps.pollMs);
      }
    },
  };
}

export type WalletWatchActivities = ReturnType<typeof createWalletWatchActivities>;
