import { RAILS, PAYMENT_RAILS, type PaymentRail } from './rails';

// What the OpenAPI document says of a body's shapes beyond its fields: the combinations the server
// enforces in code (superRefine and the transfer checks), as `anyOf` variants attached with zod's
// `.meta()`, so that a typed client generated from the document refuses what the server refuses.

type JsonSchema = Record<string, unknown>;
const text = { type: 'string', minLength: 1 };

/**
 * The shapes a body takes beyond its fields, for `.meta()`: `allOf: [{anyOf}]` beside the fields, so
 * that generated types are the fields *and* one of the shapes (a sibling `anyOf` reads as either).
 */
export const oneOfShapes = (variants: JsonSchema[]) => ({ allOf: [{ anyOf: variants }] });

/** One variant: an object whose `required` fields are these, each with its schema. */
export function variant(properties: Record<string, JsonSchema>, description?: string): JsonSchema {
  return { type: 'object', ...(description ? { description } : {}), properties, required: Object.keys(properties) };
}

/** The rails that carry the same currencies, grouped: one variant per group keeps the document small. */
function railGroups(): { kind: 'fiat' | 'chain'; rails: PaymentRail[]; currencies: readonly string[] }[] {
  const groups = new Map<string, { kind: 'fiat' | 'chain'; rails: PaymentRail[]; currencies: readonly string[] }>();
  for (const rail of PAYMENT_RAILS) {
    const profile = RAILS[rail];
    const key = `${profile.kind}:${profile.currencies.join(',')}`;
    const group = groups.get(key) ?? { kind: profile.kind, rails: [], currencies: profile.currencies };
    group.rails.push(rail);
    groups.set(key, group);
  }
  return [...groups.values()];
}

/**
 * A transfer leg per rail: the rail's currencies as an enum, and what names the other party. A chain
 * source names its sender (`from_address`) or wallet; a chain destination its address, external
 * account or wallet; a fiat destination its external account or platform account; a fiat source
 * needs nothing (deposit instructions) or a platform account.
 */
export function transferLegVariants(side: 'source' | 'destination'): JsonSchema[] {
  const parties: Record<string, string[][]> = side === 'source'
    ? { chain: [['from_address'], ['wallet_id']], fiat: [[], ['account_id']] }
    : { chain: [['to_address'], ['external_account_id'], ['wallet_id']], fiat: [['external_account_id'], ['account_id']] };
  return railGroups().flatMap(({ kind, rails, currencies }) => parties[kind].map((fields) => variant({
    payment_rail: { type: 'string', enum: rails },
    currency: { type: 'string', enum: [...currencies] },
    ...Object.fromEntries(fields.map((f) => [f, text])),
  }, `${rails.join(', ')}${fields.length ? ` with ${fields.join(', ')}` : ''}`)));
}
