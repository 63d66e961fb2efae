import { spawnSync } from 'node:child_process';
import path from 'node:path';

/**
 * The pinned Temporal CLI: TEMPORAL_CLI_PATH, the shared cache, or a fresh `go install`
 * (scripts/install-temporal-cli.sh). Returns undefined when none can be had without the internet.
 */
export function resolveTemporalCli(): string | undefined {
  const script = path.join(__dirname, '../../scripts/install-temporal-cli.sh');
  const result = spawnSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (result.status !== 0) return undefined;
  return result.stdout.trim().split('\n').pop();
}
