import fc from 'fast-check';
import { textRuleBreach } from '../../src/domain/validation';

// Request generators for the API fuzz test, driven by the OpenAPI document the API publishes: every
// operation, its path and query parameters and its body, from their JSON Schemas.

type Schema = Record<string, any>;

export interface Operation {
  method: string;
  /** OpenAPI template: /v0/customers/{customer_id} */
  template: string;
  pathParams: string[];
  query: Record<string, Schema>;
  body?: Schema;
}

export interface FuzzRequest {
  method: string;
  /** Path and query, percent-encoded as a client would send them (or not, for hostile values). */
  url: string;
  body?: unknown;
}

/** Where a hostile request carries its one breach of the text rule, and the answer it must get. */
export interface HostileRequest extends FuzzRequest {
  breach: { location: 'body' | 'query' | 'path'; key: string };
}

export function operationsOf(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [template, methods] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      const params: any[] = op.parameters ?? [];
      ops.push({
        method: method.toUpperCase(),
        template,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: Object.fromEntries(params.filter((p) => p.in === 'query').map((p) => [p.name, p.schema])),
        body: op.requestBody?.content['application/json'].schema,
      });
    }
  }
  return ops;
}

/** Ids of real objects of the fuzzing tenant, by the name of the field or parameter that takes one. */
export type KnownIds = Record<string, string[]>;

const ID_FIELDS: Record<string, string> = {
  customer_id: 'customer', on_behalf_of: 'customer', external_account_id: 'external_account', transfer_id: 'transfer', wallet_id: 'wallet', account_id: 'account',
  payment_id: 'payment', screening_id: 'screening', batch_id: 'batch', event_id: 'event', object_id: 'any',
};

const PLAUSIBLE: Record<string, string[]> = {
  currency: ['usd', 'usdc', 'usdt', 'eur', 'gbp', 'brl', 'mxn', 'dai', 'eth'],
  amount: ['10.00', '0.01', '1000000.00', '99999999999999999.00', '60.15', '1.5', '0.000001', '00010.00', '0.50', '01'],
  developer_fee: ['0.50', '0', '10.00'],
  to_address: ['0x8ba1f109551bD432803012645Ac136ddd64DBA72', '0x0000000000000000000000000000000000000000', 'So11111111111111111111111111111111111111112',
    '0x000000000000000000000000000000000000dEaD', '1nc1nerator11111111111111111111111111111111'],
  from_address: ['0x8ba1f109551bD432803012645Ac136ddd64DBA72'],
  address: ['0x8ba1f109551bD432803012645Ac136ddd64DBA72', 'So11111111111111111111111111111111111111112'],
  routing_number: ['021000021', '011000015', '123456789'],
  account_number: ['123456789', '0000'],
  iban: ['DE89370400440532013000', 'GB82WEST12345698765432', 'DE00000000000000000000'],
  bic: ['COBADEFFXXX', 'NWBKGB2L'],
  clabe: ['002010077777777771', '123'],
  country: ['US', 'de', 'XX', 'GB'],
  phone: ['+14155550123', '+4930123456789', '123'],
  date_of_birth: ['1990-04-12', '2999-01-01', '1899-12-31', '1990-02-30'],
  email: ['jane.doe@example.com', 'ops@acme.example', 'a@b.co'],
  cursor: ['cur_WyIyMDI2LTAxLTAxVDAwOjAwOjAwLjAwMFoiLCJjdXNfMSJd', 'cur_', 'cur_1'],
};

/** Printable text that obeys the text rule (the breaches are added on purpose, where wanted). */
const plainText = (minLength = 1, maxLength = 40) => fc.string({ minLength: Math.max(1, minLength), maxLength }).filter((s) => !textRuleBreach(s));

/** Values that are wrong for most fields in some way. */
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  plainText(), fc.integer(), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null), fc.constant([]), fc.constant({}),
  fc.constantFrom('99999999999999999999999999.00', '-1', '1e400', '0.0000000000000000001', 'NaN', '0x', ' ', 'x'.repeat(5000), '😀', '\u202e', 'DROP TABLE customers'),
);

/** A value for `schema`: mostly what the schema asks for, sometimes something near it or beside it. */
export function valueOf(schema: Schema, doc: any, name = '', known: KnownIds = {}, depth = 0): fc.Arbitrary<unknown> {
  if (schema.$ref) return valueOf(doc.components.schemas[schema.$ref.split('/').pop()], doc, name, known, depth);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((s: Schema) => valueOf(s, doc, name, known, depth)));
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...schema.enum) }, { weight: 1, arbitrary: plainText() });
  const idKind = ID_FIELDS[name];
  const ids = idKind === 'any' ? Object.values(known).flat() : known[idKind ?? ''] ?? [];
  switch (schema.type) {
    case 'object': return objectOf(schema, doc, known, depth);
    case 'array': return fc.array(depth > 3 ? fc.constant('x') : valueOf(schema.items ?? {}, doc, name, known, depth + 1),
      { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) });
    case 'integer': return fc.oneof(fc.integer({ min: schema.minimum ?? -10, max: schema.maximum ?? 1000 }), fc.constantFrom(0, -1, 2 ** 31, 2 ** 53));
    case 'number': return fc.oneof(fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true }), fc.constantFrom(0, -1, 1e308, 2 ** 53));
    case 'boolean': return fc.boolean();
    case 'string': {
      const options: fc.WeightedArbitrary<unknown>[] = [{ weight: 2, arbitrary: plainText(schema.minLength, schema.maxLength ?? 40) }];
      if (ids.length) options.push({ weight: 6, arbitrary: fc.constantFrom(...ids) });
      if (PLAUSIBLE[name]) options.push({ weight: 6, arbitrary: fc.constantFrom(...PLAUSIBLE[name]) });
      if (schema.format === 'email') options.push({ weight: 6, arbitrary: fc.emailAddress() });
      if (schema.format === 'date-time') options.push({ weight: 6, arbitrary: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()) });
      if (schema.format === 'date') options.push({ weight: 6, arbitrary: fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)) });
      if (schema.pattern) options.push({ weight: 4, arbitrary: fc.stringMatching(new RegExp(schema.pattern)).filter((s) => !textRuleBreach(s)) });
      return fc.oneof(...options);
    }
    default: return fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), plainText());
  }
}

function objectOf(schema: Schema, doc: any, known: KnownIds, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const props: Record<string, Schema> = schema.properties ?? {};
  const required = new Set<string>(schema.required ?? []);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [key, prop] of Object.entries(props)) model[key] = valueOf(prop, doc, key, known, depth + 1);
  const fields = fc.record(model, { requiredKeys: Object.keys(props).filter((k) => required.has(k)) });
  // Now and then a field the schema does not know.
  return fc.tuple(fields, fc.option(fc.tuple(plainText(1, 12), oddValue), { freq: 10 }))
    .map(([value, extra]) => (extra ? { ...value, [extra[0]]: extra[1] } : value));
}

/**
 * A path parameter: a known id mostly, or some other id-shaped or arbitrary text, percent-encoded.
 * DELETE never names a known object, so that the fixtures stay for the operations after it.
 */
function pathParam(name: string, known: KnownIds, method: string): fc.Arbitrary<string> {
  const ids = method === 'DELETE' ? [] : known[ID_FIELDS[name] ?? ''] ?? [];
  return fc.oneof(
    { weight: ids.length ? 6 : 0, arbitrary: ids.length ? fc.constantFrom(...ids) : fc.constant('x') },
    { weight: 2, arbitrary: fc.stringMatching(/^[a-z]{2,5}_[0-9A-Za-z]{1,30}$/) },
    { weight: 2, arbitrary: plainText(1, 60).map(encodeURIComponent) },
  );
}

function fill(template: string, values: Record<string, string>) {
  return template.replace(/\{(\w+)\}/g, (_m, name: string) => values[name]);
}

/** The operation's path with a real object's id in each parameter (or a made-up one where none is known). */
export function knownPath(op: Operation, known: KnownIds): string {
  return fill(op.template, Object.fromEntries(op.pathParams.map((p) => [p, known[ID_FIELDS[p] ?? '']?.[0] ?? 'x_0'])));
}

function queryString(query: Record<string, string>) {
  const parts = Object.entries(query).map(([k, v]) => `${encodeURIComponent(k)}=${v}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

/** Query values, percent-encoded; each parameter present or not. */
function queryOf(op: Operation, doc: any, known: KnownIds): fc.Arbitrary<Record<string, string>> {
  const model: Record<string, fc.Arbitrary<string>> = {};
  for (const [name, schema] of Object.entries(op.query)) {
    model[name] = valueOf(schema, doc, name, known).map((v) => encodeURIComponent(String(v)));
  }
  return fc.record(model, { requiredKeys: [] }) as fc.Arbitrary<Record<string, string>>;
}

/** Every leaf of a JSON value (strings, numbers, booleans, null, empty containers): its path and value. */
function leaves(value: unknown, path: string[] = []): [string[], unknown][] {
  if (Array.isArray(value) && value.length) return value.flatMap((v, i) => leaves(v, [...path, String(i)]));
  if (value && typeof value === 'object' && Object.keys(value).length) return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]));
  return [[path, value]];
}

function dropAt(value: any, path: string[]): any {
  if (path.length === 0 || value === null || typeof value !== 'object') return value;
  const copy = Array.isArray(value) ? [...value] : { ...value };
  if (path.length === 1) delete copy[path[0]];
  else copy[path[0]] = dropAt(value[path[0]], path.slice(1));
  return copy;
}

/** A valid body as it is, or with one of its values left out or replaced by an odd one. */
function mutated(example: unknown): fc.Arbitrary<unknown> {
  const paths = leaves(example).map(([path]) => path);
  return fc.record({ action: fc.constantFrom('keep', 'drop', 'replace', 'replace'), leaf: fc.nat(), value: oddValue }).map(({ action, leaf, value }) => {
    const at = paths[leaf % paths.length];
    if (action === 'keep' || at.length === 0) return example;
    return action === 'drop' ? dropAt(example, at) : replaceAt(example, at, value);
  });
}

/**
 * A request to `op` with values drawn from its schemas, or one of its valid `examples` with one value
 * changed: anything may come back but a server error.
 */
export function schemaRequest(op: Operation, doc: any, known: KnownIds, examples: unknown[] = []): fc.Arbitrary<FuzzRequest> {
  const path = fc.record(Object.fromEntries(op.pathParams.map((p) => [p, pathParam(p, known, op.method)])));
  const drawn = op.body ? valueOf(op.body, doc, '', known).map((b) => b as unknown) : fc.constant(undefined);
  const body = examples.length ? fc.oneof(drawn, fc.constantFrom(...examples).chain(mutated)) : drawn;
  return fc.record({ path, query: queryOf(op, doc, known), body }).map(({ path: p, query, body: b }) => ({
    method: op.method, url: fill(op.template, p) + queryString(query), body: b,
  }));
}

// Breaches of the text rule as JSON strings, as percent-encoded query values, and as raw path segments
// (including encodings that do not decode at all).
const BODY_BREACHES = ['', '\u0000', 'a\u0000b', '\ud800', 'x\udc00', '\udbff\u0000', 'ok\u0000'];
const QUERY_BREACHES = ['%00', 'a%00b', ''];
const PATH_BREACHES = ['%00', 'a%00', '%', '%E0%A4%A', '%C0%AF', '%FF%FE', '%ED%A0%80', 'x%'];

function replaceAt(value: any, path: string[], replacement: unknown): any {
  if (path.length === 0) return replacement;
  const copy = Array.isArray(value) ? [...value] : { ...value };
  copy[path[0]] = replaceAt(value[path[0]], path.slice(1), replacement);
  return copy;
}

/**
 * A request to `op` that is valid but for one breach of the text rule, in its body, its query or
 * one of its path parameters: the API must answer 400 naming that place, and change nothing.
 */
export function hostileRequest(op: Operation, doc: any, known: KnownIds): fc.Arbitrary<HostileRequest> {
  const places: ('body' | 'query' | 'path')[] = [
    ...(op.body ? ['body' as const] : []), ...(Object.keys(op.query).length ? ['query' as const] : []), ...(op.pathParams.length ? ['path' as const] : []),
  ];
  const knownPath = fc.record(Object.fromEntries(op.pathParams.map((p) => [p, fc.constantFrom(...(known[ID_FIELDS[p] ?? '']?.length ? known[ID_FIELDS[p]] : ['x_0']))])));
  return fc.record({
    place: fc.constantFrom(...places),
    path: knownPath,
    body: op.body ? valueOf(op.body, doc, '', known) : fc.constant(undefined),
    queryName: fc.constantFrom(...(Object.keys(op.query).length ? Object.keys(op.query) : ['-'])),
    pathName: fc.constantFrom(...(op.pathParams.length ? op.pathParams : ['-'])),
    leaf: fc.nat(),
    breach: fc.nat(),
  }).map(({ place, path, body, queryName, pathName, leaf, breach }) => {
    if (place === 'path') {
      const url = fill(op.template, { ...path, [pathName]: PATH_BREACHES[breach % PATH_BREACHES.length] });
      return { method: op.method, url, body, breach: { location: 'path', key: pathName } };
    }
    if (place === 'query') {
      const url = fill(op.template, path) + queryString({ [queryName]: QUERY_BREACHES[breach % QUERY_BREACHES.length] });
      return { method: op.method, url, body, breach: { location: 'query', key: queryName } };
    }
    const strings = leaves(body).filter(([, v]) => typeof v === 'string').map(([path]) => path);
    const at = strings.length ? strings[leaf % strings.length] : ['fuzz'];
    const poisoned = strings.length ? replaceAt(body, at, BODY_BREACHES[breach % BODY_BREACHES.length])
      : { ...(body as object), fuzz: BODY_BREACHES[1 + (breach % (BODY_BREACHES.length - 1))] };
    return { method: op.method, url: fill(op.template, path), body: poisoned, breach: { location: 'body', key: at.join('.') } };
  });
}
