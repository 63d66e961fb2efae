import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// NACHA files checked, and the test bank's answers written, by moov-io/ach, an implementation this
// project did not write (test/tools/moov-ach, built by scripts/install-moov-ach.sh): our own reader
// and writer never prove each other.

let checker: string | undefined;

function moovTool(): string {
  if (checker) return checker;
  const built = spawnSync('bash', [path.join(__dirname, '../../scripts/install-moov-ach.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const found = built.stdout?.trim().split('\n').pop();
  if (built.status !== 0 || !found) throw new Error('the moov-io/ach tool could not be built (scripts/install-moov-ach.sh)');
  return (checker = found);
}

export interface MoovResult {
  error?: string;
  batches?: number;
  entries?: number;
  returns?: number;
  notifications_of_change?: number;
}

/** What moov-io/ach's reader and Validate() say of each file. */
export function moovValidate(...texts: string[]): MoovResult[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'moov-ach-'));
  try {
    const files = texts.map((text, i) => {
      const file = path.join(dir, `${i}.ach`);
      fs.writeFileSync(file, text);
      return file;
    });
    const run = spawnSync(moovTool(), ['validate', ...files], { encoding: 'utf8' });
    if (run.status !== 0 && run.status !== 1) throw new Error(`moov-ach validate: ${run.stderr}`);
    return run.stdout.trim().split('\n').map((line) => {
      const { file: _file, ...result } = JSON.parse(line) as MoovResult & { file: string };
      return result;
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
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
