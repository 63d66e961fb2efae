/** Global setup publishes the addresses of the running stack in this environment variable. */
export const STACK_ENV = 'FP_TEST_STACK';

export interface StackInfo {
  apiUrl: string;
  databaseUrl: string;
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  encryptionKey: string;
  redisUrl: string;
  processEnv: Record<string, string>;
  logDir: string;
}
