import type { Client } from '@temporalio/client';
import { StuckActivityAttr } from '../temporal/search-attributes';

export interface StuckWorkflow {
  workflowId: string;
  type: string;
  startedAt: Date;
  /** The activities it keeps retrying past their alarm threshold (workflows/retry-alarm.ts). */
  stuckActivities: string[];
  /** What the server knows of its activities in flight (local activities run inside workflow tasks and are not listed). */
  pending: { activityType: string; attempt: number; lastFailure?: string }[];
}

/** Visibility query for the running workflows that raised the retry alarm. */
const STUCK_WORKFLOWS_QUERY = `ExecutionStatus = 'Running' AND ${StuckActivityAttr.name} IS NOT NULL`;

/** Running workflows with an activity retried past its alarm threshold, oldest first. */
export async function stuckWorkflows(temporal: Client): Promise<StuckWorkflow[]> {
  const found: StuckWorkflow[] = [];
  for await (const wf of temporal.workflow.list({ query: STUCK_WORKFLOWS_QUERY })) {
    const described = await temporal.workflow.getHandle(wf.workflowId, wf.runId).describe();
    found.push({
      workflowId: wf.workflowId,
      type: wf.type,
      startedAt: wf.startTime,
      stuckActivities: (wf.typedSearchAttributes.get(StuckActivityAttr) ?? '').split(',').filter(Boolean),
      pending: (described.raw.pendingActivities ?? []).map((a) => ({
        activityType: a.activityType?.name ?? '?',
        attempt: a.attempt ?? 0,
        lastFailure: a.lastFailure?.message ?? undefined,
      })),
    });
  }
  return found.sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
}
