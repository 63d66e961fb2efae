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
  /** The test bank's folders on disk (its SFTP server's inbox and outbox), when the stack has one. */
  bankRoot?: string;
  /** The settings that carry the live ACH rails on the test bank (the stack's API and worker have them; processEnv does not). */
  bankEnv?: Record<string, string>;
}
