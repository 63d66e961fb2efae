// Compiled, never run (`npm run typecheck`, and the platform's test/e2e/sdk.test.ts): each call below
// is one the API refuses, and each must fail to type-check — `@ts-expect-error` fails the build if
// the line under it compiles. The calls without it are the valid ones beside them.
import { createClient } from '../src';

const client = createClient({ apiKey: 'sk_test_x' });
const address = { line1: '1 Market St', city: 'San Francisco', country: 'US' };

export async function calls() {
  // An individual without names.
  // @ts-expect-error first_name and last_name are required for individuals
  await client.POST('/v0/customers', { body: { type: 'individual', email: 'jane@example.com' } });
  await client.POST('/v0/customers', { body: { type: 'individual', email: 'jane@example.com', first_name: 'Jane', last_name: 'Doe' } });
  // A business without its name.
  // @ts-expect-error business_name is required for businesses
  await client.POST('/v0/customers', { body: { type: 'business', email: 'ops@acme.example' } });

  // An empty KYC body.
  // @ts-expect-error a submission carries documents or beneficial owners
  await client.POST('/v0/customers/{customer_id}/kyc', { params: { path: { customer_id: 'cus_1' } }, body: {} });
  await client.POST('/v0/customers/{customer_id}/kyc', {
    params: { path: { customer_id: 'cus_1' } }, body: { document_type: 'passport', document_front: 'data:image/png;base64,AA', selfie: 'data:image/png;base64,AA' },
  });

  // A chain payout without an address.
  await client.POST('/v0/transfers', {
    // @ts-expect-error a chain destination names to_address, an external account or a wallet
    body: { amount: '10.00', on_behalf_of: 'cus_1', source: { payment_rail: 'ach', currency: 'usd' }, destination: { payment_rail: 'base', currency: 'usdc' } },
  });
  await client.POST('/v0/transfers', {
    body: { amount: '10.00', on_behalf_of: 'cus_1', source: { payment_rail: 'ach', currency: 'usd' }, destination: { payment_rail: 'base', currency: 'usdc', to_address: '0x8ba1f109551bD432803012645Ac136ddd64DBA72' } },
  });
  // sepa with usd.
  await client.POST('/v0/transfers', {
    // @ts-expect-error sepa carries eur only
    body: { amount: '10.00', on_behalf_of: 'cus_1', source: { payment_rail: 'sepa', currency: 'usd' }, destination: { payment_rail: 'base', currency: 'usdc', to_address: '0x0' } },
  });

  // A malformed phone: the type is a string; its E.164 pattern is in the document and enforced by the API.
  await client.POST('/v0/customers', { body: { type: 'individual', email: 'j@example.com', first_name: 'J', last_name: 'D', address, phone: '+14155550123' } });
  // @ts-expect-error a phone is a string, not a number
  await client.POST('/v0/customers', { body: { type: 'individual', email: 'j@example.com', first_name: 'J', last_name: 'D', phone: 4155550123 } });
}

export async function patterns() {
  // A malformed phone (no +country code) and a date in another format.
  // @ts-expect-error a phone is E.164: +, country code, number
  await client.POST('/v0/customers', { body: { type: 'individual', email: 'j@example.com', first_name: 'J', last_name: 'D', phone: '4155550123' } });
  // @ts-expect-error a date is YYYY-MM-DD
  await client.POST('/v0/customers', { body: { type: 'individual', email: 'j@example.com', first_name: 'J', last_name: 'D', date_of_birth: '12/04/1990' } });
  await client.POST('/v0/customers', { body: { type: 'individual', email: 'j@example.com', first_name: 'J', last_name: 'D', date_of_birth: '1990-04-12' } });
}
