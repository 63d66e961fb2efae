import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// NACHA files checked, and the test bank's answers written, by moov-io/ach, an implementation this
// project did not write (test/tools/moov-ach, built by scripts/install-test-tool.sh): our own reader
// and writer never prove each other.

const tools = new Map<string, string>();

/** A Go tool of test/tools, built once into the cache outside the clone; its path. */
export function testTool(name: 'moov-ach' | 'moov-bai2'): string {
  const known = tools.get(name);
  if (known) return known;
  const built = spawnSync('bash', [path.join(__dirname, '../../scripts/install-test-tool.sh'), name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const found = built.stdout?.trim().split('\n').pop();
  if (built.status !== 0 || !found) throw new Error(`the ${name} tool could not be built (scripts/install-test-tool.sh ${name})`);
  tools.set(name, found);
  return found;
}

const moovTool = () => testTool('moov-ach');

export interface MoovResult {
  error?: string;
  batches?: number;
  entries?: number;
  returns?: number;
  notifications_of_change?: number;
}

/**
 * A test tool's verdict on each of `texts`: written to files of a folder of their own, named on its
 * command line after `command`, one JSON line back per file (exit 1: some file failed).
 */
export function toolVerdicts<T>(name: 'moov-ach' | 'moov-bai2', command: string, texts: string[]): T[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  try {
    const files = texts.map((text, i) => {
      const file = path.join(dir, String(i));
      fs.writeFileSync(file, text);
      return file;
    });
    const run = spawnSync(testTool(name), [command, ...files], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (run.status !== 0 && run.status !== 1) throw new Error(`${name} ${command}: ${run.stderr}`);
    return run.stdout.trim().split('\n').map((line) => {
      const { file: _file, ...result } = JSON.parse(line) as T & { file: string };
      return result as T;
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** What moov-io/ach's reader and Validate() say of each file. */
export function moovValidate(...texts: string[]): MoovResult[] {
  return toolVerdicts<MoovResult>('moov-ach', 'validate', texts);
}

/** An answer of the bank to an entry it took: the original entry, and its R-code or C-code. */
export interface MoovAnswerItem {
  transactionCode: number;
  routing: string;
  account: string;
  amountMinor: number;
  idNumber: string;
  name: string;
  secCode: string;
  trace: string;
  code: string;
  correctedData?: string;
}

/** A return file (addenda 99) or a notification-of-change file (COR, addenda 98), written by moov-io/ach. */
export function moovAnswerFile(request: {
  kind: 'return' | 'notification_of_change';
  odfi: { routing: string; name: string; companyId: string; companyName: string };
  items: MoovAnswerItem[];
}): string {
  const run = spawnSync(moovTool(), ['answer'], { input: JSON.stringify(request), encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`moov-ach answer: ${run.stderr}`);
  return run.stdout;
}
