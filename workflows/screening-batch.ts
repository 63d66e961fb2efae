import { defineQuery, proxyActivities, setCurrentDetails, setHandler } from '@temporalio/workflow';
import type { SanctionsActivities } from '../activities/sanctions';

export interface ScreeningBatchInput {
  batchId: string;
  total: number;
  chunkSize: number;
  /** Chunks screened at once (the worker's CPU is the limit). */
  parallelChunks: number;
}

export interface ScreeningBatchProgress {
  total: number;
  screened: number;
  potentialMatches: number;
}

export const batchProgress = defineQuery<ScreeningBatchProgress>('progress');

const { screenBatchChunk } = proxyActivities<SanctionsActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});
const { completeScreeningBatch } = proxyActivities<SanctionsActivities>({ startToCloseTimeout: '1 minute' });

/** `screening-batch:{id}`: screens a batch in chunks, progress visible as a query and in the UI. */
export async function screeningBatchWorkflow(input: ScreeningBatchInput): Promise<ScreeningBatchProgress> {
  const progress: ScreeningBatchProgress = { total: input.total, screened: 0, potentialMatches: 0 };
  setHandler(batchProgress, () => progress);
  const chunks: [number, number][] = [];
  for (let from = 0; from < input.total; from += input.chunkSize) chunks.push([from, Math.min(input.total, from + input.chunkSize)]);

  for (let i = 0; i < chunks.length; i += input.parallelChunks) {
    const results = await Promise.all(
      chunks.slice(i, i + input.parallelChunks).map(([from, to]) => screenBatchChunk({ batchId: input.batchId, from, to })),
    );
    for (const r of results) {
      progress.screened += r.screened;
      progress.potentialMatches += r.potentialMatches;
    }
    setCurrentDetails(`Screened ${progress.screened} of ${progress.total}; ${progress.potentialMatches} potential matches`);
  }
  await completeScreeningBatch({ batchId: input.batchId });
  setCurrentDetails(`Done: ${progress.total} screened, ${progress.potentialMatches} potential matches`);
  return progress;
}
