import type { Generated } from 'kysely';
import type { Environment, Numeric } from './column-types';

// The bank-file rails' tables (migrations 0027, 0028, 0036; src/bank-files/, docs/BANK_FILES.md).

export interface BankFilesTable {
  id: string;
  rail: string;
  direction: 'outbound' | 'inbound';
  name: string;
  file_id_modifier: string | null;
  sha256: string;
  contents_encrypted: string;
  entry_count: number;
  total_debit_minor: Numeric;
  total_credit_minor: Numeric;
  status: 'recorded' | 'uploaded' | 'processed' | 'rejected';
  created_at: Date;
  uploaded_at: Date | null;
  /** The file window that built it (outbound; migration 0028). */
  window_id: Generated<string | null>;
  /** Why the bank rejected it, or what it carried (inbound). */
  detail: Generated<string | null>;
}

/** A payment the bank-file rail holds (migration 0028). */
export interface BankPaymentsTable {
  id: string;
  developer_id: string;
  environment: Environment;
  rail: string;
  direction: 'credit' | 'debit';
  amount_minor: Numeric;
  currency: string;
  external_account_id: string | null;
  purpose: string;
  idempotency_key: string;
  reference: string | null;
  /** The entry's individual id number in the file (15 digits): how a return names it. */
  entry_ref: Generated<string>;
  status: 'queued' | 'filed' | 'rejected' | 'returned';
  code: string | null;
  file_id: string | null;
  /** YYYY-MM-DD: the settlement date the file asks for. */
  effective_date: string | null;
  settles_at: Date | null;
  created_at: Date;
  returned_at: Date | null;
  /** ACH: the trace number the entry went out with (migration 0036). */
  trace_number: string | null;
  /** Why the payment was set aside instead of filed: the field and what is wrong with it. */
  reason: string | null;
}

/** The next ACH trace counter of each ODFI (7 digits, from 1). */
export interface AchTraceCountersTable {
  odfi: string;
  next_trace: number;
}

export interface BankFilePaymentsTable {
  file_id: string;
  payment_id: string;
}

export interface BankFileTables {
  bank_files: BankFilesTable;
  bank_file_payments: BankFilePaymentsTable;
  bank_payments: BankPaymentsTable;
  ach_trace_counters: AchTraceCountersTable;
}
