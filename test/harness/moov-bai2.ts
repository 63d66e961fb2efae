import { toolVerdicts } from './moov-ach';

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
  return toolVerdicts<MoovBai2Result>('moov-bai2', 'read', texts);
}
