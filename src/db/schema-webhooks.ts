import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Environment } from './column-types';

// Webhook endpoints, deliveries and attempts (src/webhooks/, docs/WEBHOOKS.md).

export type WebhookEndpointStatus = 'enabled' | 'disabled' | 'failing';

/** A developer's webhook endpoint (migration 0018). */
export interface WebhookEndpointsTable {
  id: string;
  developer_id: string;
  environment: Environment;
  url: string;
  description: string | null;
  enabled_events: ColumnType<string[], string, string>;
  status: WebhookEndpointStatus;
  /** Why it is failing: the last error of the delivery that gave up. */
  status_reason: string | null;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  event_id: string;
  endpoint_id: string;
  status: WebhookDeliveryStatus;
  attempts: Generated<number>;
  next_attempt_at: Date;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  attempted_at: Date;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;

export interface WebhookTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
