import type { RouteDef } from '../api/route';
import { accountRoutes } from './accounts/routes';
import { customerRoutes } from './customers/routes';
import { eventRoutes } from './events/routes';
import { externalAccountRoutes } from './external-accounts/routes';
import { kycRoutes } from './kyc/routes';
import { liquidationAddressRoutes } from './liquidation-addresses/routes';
import { reconciliationRoutes } from './reconciliation/routes';
import { virtualAccountRoutes } from './virtual-accounts/routes';
import { sanctionsRoutes } from './sanctions/routes';
import { transferRoutes } from './transfers/routes';
import { walletRoutes } from './wallets/routes';
import { webhookRoutes } from './webhooks/routes';

/** Every /v0 route, one module per resource. The OpenAPI document is generated from this list. */
export const allRoutes: RouteDef[] = [...customerRoutes, ...kycRoutes, ...externalAccountRoutes, ...sanctionsRoutes, ...transferRoutes, ...eventRoutes, ...webhookRoutes, ...walletRoutes, ...accountRoutes, ...liquidationAddressRoutes, ...virtualAccountRoutes, ...reconciliationRoutes];
