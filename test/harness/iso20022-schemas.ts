import fs from 'node:fs';
import path from 'node:path';
import { validateXML } from 'xmllint-wasm';

// Validation of SEPA messages against the official ISO 20022 schemas committed as fixtures
// (test/fixtures/iso20022/README.md), with libxml2's validator compiled to WebAssembly.

const DIR = path.join(__dirname, '..', 'fixtures', 'iso20022');
const NAMESPACE = /xmlns="urn:iso:std:iso:20022:tech:xsd:([a-z]{4}\.\d{3}\.\d{3}\.\d{2})"/;

/** The schema each message version is validated with: pain.001.001.09 has none here (see the README). */
const SCHEMA_OF: Record<string, string> = {
  'pain.001.001.09': 'pain.001.001.10',
  'pain.001.001.10': 'pain.001.001.10',
  'pain.002.001.11': 'pain.002.001.11',
  'camt.054.001.08': 'camt.054.001.08',
  'camt.053.001.08': 'camt.053.001.08',
};

/** The European Payments Council's SEPA credit transfer schemas (EPC132-08), which restrict ISO 20022 to what SEPA banks take. */
export const EPC_SCHEMAS = {
  pain001_2023: 'EPC132-08_2023_V1.0_pain.001.001.09',
  pain001_2025: 'EPC132-08_2025_V1.0_pain.001.001.09',
  pain002_2025: 'EPC132-08_2025_V1.0_pain.002.001.10',
} as const;

export const ISO20022_SCHEMA_FILES = [...new Set([...Object.values(SCHEMA_OF), ...Object.values(EPC_SCHEMAS)])].map((name) => path.join(DIR, `${name}.xsd`));

/** An EPC schema's complaints about `text`, a message of the schema's own version. */
export async function epcSchemaErrors(text: string, schema: (typeof EPC_SCHEMAS)[keyof typeof EPC_SCHEMAS]): Promise<string[]> {
  const result = await validateXML({
    xml: [{ fileName: 'message.xml', contents: text }],
    schema: [{ fileName: `${schema}.xsd`, contents: fs.readFileSync(path.join(DIR, `${schema}.xsd`), 'utf8') }],
  });
  return result.errors.map((e) => e.rawMessage);
}

/** The schema's complaints about `text` (a whole message), or none when it is valid. */
export async function iso20022SchemaErrors(text: string): Promise<string[]> {
  const version = NAMESPACE.exec(text)?.[1];
  const schema = version && SCHEMA_OF[version];
  if (!schema) throw new Error(`No ISO 20022 schema for the message's namespace (${version ?? 'none'})`);
  const namespace = (v: string) => `xmlns="urn:iso:std:iso:20022:tech:xsd:${v}"`;
  const contents = text.replace(namespace(version), namespace(schema));
  const result = await validateXML({
    xml: [{ fileName: 'message.xml', contents }],
    schema: [{ fileName: `${schema}.xsd`, contents: fs.readFileSync(path.join(DIR, `${schema}.xsd`), 'utf8') }],
  });
  return result.errors.map((e) => e.rawMessage);
}
