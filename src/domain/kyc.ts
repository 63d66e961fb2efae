import { SEPA_COUNTRIES } from './regions';

export const KYC_STATUSES = [
  'not_started', 'pending', 'incomplete', 'manual_review', 'under_review', 'awaiting_ubo', 'approved', 'rejected',
] as const;
export type KycStatus = (typeof KYC_STATUSES)[number];

/** States in which the customer (or the hosted page) may submit documents. */
export const ACCEPTS_SUBMISSION: readonly KycStatus[] = ['not_started', 'pending', 'incomplete', 'awaiting_ubo'];

export const ENDORSEMENTS = [
  'can_trade_stablecoins', 'can_wire_transfer', 'can_ach_transfer', 'can_sepa_transfer', 'can_swift_transfer',
  'can_hold_custody', 'can_use_mpc', 'can_faster_payments_transfer', 'can_pix_transfer', 'can_spei_transfer',
] as const;
export type Endorsement = (typeof ENDORSEMENTS)[number];

/**
 * Endorsements granted on KYC approval, by the customer's country. Every approved customer may hold
 * stablecoins in custodial and MPC wallets and send international wires; domestic rails follow the
 * country: ACH and domestic wire in the US, SEPA in the SEPA zone. Without an address on file, only
 * the country-independent ones.
 */
export function endorsementsFor(country: string | undefined): Endorsement[] {
  const granted: Endorsement[] = ['can_trade_stablecoins', 'can_hold_custody', 'can_use_mpc', 'can_swift_transfer'];
  if (country === 'US') granted.push('can_ach_transfer', 'can_wire_transfer');
  if (country && SEPA_COUNTRIES.has(country)) granted.push('can_sepa_transfer');
  if (country === 'GB') granted.push('can_faster_payments_transfer');
  if (country === 'BR') granted.push('can_pix_transfer');
  if (country === 'MX') granted.push('can_spei_transfer');
  return granted.sort();
}
