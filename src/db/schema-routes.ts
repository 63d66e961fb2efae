import type { ColumnType, Selectable } from 'kysely';
import type { Environment, Numeric } from './column-types';

// Standing payment routes and their deposits (src/payment-routes/, docs/ROUTES.md).

/** Where a route's deposits go: a transfer's destination leg (POST /v0/transfers' `destination`). */
export interface RouteDestination {
  payment_rail: string;
  currency: string;
  to_address?: string;
  external_account_id?: string;
  wallet_id?: string;
  account_id?: string;
}

/** A standing route: a liquidation address or a virtual account (migration 0030, src/routes/). */
export interface PaymentRoutesTable {
  id: string;
  developer_id: string;
  environment: Environment;
  customer_id: string;
  kind: 'liquidation_address' | 'virtual_account';
  status: 'active' | 'deactivated';
  source_rail: string;
  source_currency: string;
  /** The address as the watcher compares it (walletAddressKey), and as it is shown. */
  address: string | null;
  display_address: string | null;
  deposit_index: string | null;
  deposit_reference: string | null;
  destination: ColumnType<RouteDestination, string, string>;
  developer_fee_percent: Numeric;
  return_address: string | null;
  /** The route's own limits in minor units of its source currency (migration 0031); null: none. */
  limit_per_deposit_minor: Numeric | null;
  limit_per_day_minor: Numeric | null;
  created_at: Date;
  updated_at: Date;
}

export type PaymentRouteRow = Selectable<PaymentRoutesTable>;

export type RouteDepositState = 'confirming' | 'confirmed' | 'transferred' | 'dropped' | 'held';

/** A deposit a route received, once, and what became of it (migration 0030). */
export interface RouteDepositsTable {
  id: string;
  route_id: string;
  developer_id: string;
  environment: Environment;
  deposit_key: string;
  rail: string;
  currency: string;
  amount_minor: Numeric;
  tx_hash: string | null;
  position: string | null;
  sender: string | null;
  /** A virtual account's deposit: the provider's payment id (migration 0031). */
  provider_payment_id: string | null;
  confirmations: number;
  state: RouteDepositState;
  transfer_id: string | null;
  reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export type RouteDepositRow = Selectable<RouteDepositsTable>;

export interface RouteTables {
  payment_routes: PaymentRoutesTable;
  route_deposits: RouteDepositsTable;
}
