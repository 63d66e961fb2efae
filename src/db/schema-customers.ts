import type { ColumnType, Insertable, Selectable, Updateable } from 'kysely';
import type { Environment } from './column-types';

// Customers and their KYC (src/customers/, src/kyc/, docs/KYC.md).

export interface Address {
  line1: string;
  line2?: string;
  city: string;
  state?: string;
  postal_code?: string;
  country: string;
}

export interface CustomersTable {
  id: string;
  developer_id: string;
  environment: Environment;
  type: 'individual' | 'business';
  email: string;
  first_name: string | null;
  last_name: string | null;
  business_name: string | null;
  phone: string | null;
  date_of_birth: string | null;
  address: ColumnType<Address | null, string | null, string | null>;
  tax_id_encrypted: string | null;
  status: 'pending' | 'active' | 'suspended' | 'deleted';
  kyc_status: string;
  risk_rating: 'low' | 'medium' | 'high' | null;
  endorsements: string[];
  rejection_reasons: ColumnType<string[] | null, string | null, string | null>;
  incomplete_reasons: ColumnType<string[] | null, string | null, string | null>;
  review_reasons: ColumnType<string[] | null, string | null, string | null>;
  /** Who decided a manual review, what and when: kept for audit, not returned by the API. */
  kyc_decision: ColumnType<{ decision: 'approve' | 'reject'; reasons: string[] | null; operator: string; decided_at: string } | null, string | null, string | null>;
  kyc_link_token_hash: string | null;
  kyc_link_expires_at: Date | null;
  /** A compliance freeze while status is suspended (migration 0025); the operator is kept for audit, not returned. */
  suspension: ColumnType<CustomerSuspension | null, string | null | undefined, string | null>;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface CustomerSuspension {
  reason: string;
  operator: string;
  suspended_at: string;
  /** The status a reactivation goes back to (KYC may have approved the customer meanwhile). */
  previous_status: 'pending' | 'active';
}

export interface KycSubmissionsTable {
  id: string;
  customer_id: string;
  developer_id: string;
  environment: Environment;
  document_type: string | null;
  document_front_encrypted: string | null;
  selfie_encrypted: string | null;
  beneficial_owners_encrypted: string | null;
  beneficial_owner_count: number;
  channel: 'api' | 'hosted_page';
  created_at: Date;
}

export type CustomerRow = Selectable<CustomersTable>;

export type NewCustomer = Insertable<CustomersTable>;

export type CustomerUpdate = Updateable<CustomersTable>;

export interface CustomerTables {
  customers: CustomersTable;
  kyc_submissions: KycSubmissionsTable;
}
