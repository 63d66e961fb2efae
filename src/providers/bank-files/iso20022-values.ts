import { XMLParser } from 'fast-xml-parser';
import { parseAmountOrZero } from '../../domain/money';

// Values as fast-xml-parser gives them from ISO 20022 messages (attributes under `@`, an element
// with attributes as `#text`), shared by the readers of the bank's messages.

/** An element's text, whether it came with attributes (`<Amt Ccy="EUR">1.00</Amt>`) or without. */
export const textOf = (node: unknown): string => (node && typeof node === 'object' ? String((node as Record<string, unknown>)['#text'] ?? '') : String(node ?? ''));

/** An amount in minor units (two decimals), zero included (a balance may be nil); `where` names it in the error when it is not one. */
export function minorOf(text: unknown, where: string): bigint {
  const minor = parseAmountOrZero(String(text ?? '').trim(), 2);
  if (minor === null) throw new Error(`${where}: '${String(text)}' is not an amount`);
  return minor;
}

/** A reader of ISO 20022 messages: namespaces dropped, values kept as text, `arrays` always read as lists. */
export function iso20022Parser(arrays: string[]): XMLParser {
  return new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', removeNSPrefix: true, parseTagValue: false, isArray: (name) => arrays.includes(name) });
}
