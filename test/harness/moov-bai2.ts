import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testTool } from './moov-ach';

// BAI2 statements read and validated by moov-io/bai2, an implementation this project did not write
// (test/tools/moov-bai2): the sandbox bank's writer and the platform's reader never prove each other.

export interface MoovBai2Result {
  error?: string;
  /** The file as moov read it (its JSON shape). */
  bai2?: {
    fileControlTotal: string;
    Groups: { Accounts: { accountNumber: string; currencyCode: string; summaries: { TypeCode: string; Amount: string }[]; accountControlTotal: string; Details: { TypeCode: string; Amount: string; BankReferenceNumber: string; CustomerReferenceNumber: string; Text: string }[] | null }[] }[];
  };
}

/** What moov-io/bai2's reader and Validate() say of each file. */
export function moovBai2Read(...texts: string[]): MoovBai2Result[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'moov-bai2-'));
  try {
    const files = texts.map((text, i) => {
      const file = path.join(dir, `${i}.bai2`);
      fs.writeFileSync(file, text);
      return file;
    });
    const run = spawnSync(testTool('moov-bai2'), ['read', ...files], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (run.status !== 0 && run.status !== 1) throw new Error(`moov-bai2 read: ${run.stderr}`);
    return run.stdout.trim().split('\n').map((line) => {
      const { file: _file, ...result } = JSON.parse(line) as MoovBai2Result & { file: string };
      return result;
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
