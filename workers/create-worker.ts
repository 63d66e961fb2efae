import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities';

/** One worker polls the platform task queue for every workflow and activity. */
export async function createWorker(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
  activityDeps: ActivityDeps;
}) {
  const connection = await NativeConnection.connect({ address: opts.address });
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    workflowsPath: require.resolve('../workflows'),
    activities: createActivities(opts.activityDeps),
    maxConcurrentActivityTaskExecutions: 200,
  });
  return { worker, connection };
}
