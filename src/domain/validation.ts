import countries from 'i18n-iso-countries';
import { isValidPhoneNumber } from 'libphonenumber-js';
import { z } from 'zod';

/** ISO 3166-1 alpha-2; lower-case input is accepted and normalised to upper case. */
export const countryCode = z
  .string()
  .trim()
  .transform((v) => v.toUpperCase())
  .refine((v) => /^[A-Z]{2}$/.test(v) && countries.isValid(v), { message: 'must be an ISO 3166-1 alpha-2 country code' })
  .meta({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166-1 alpha-2 country code', examples: ['US'] });

/** E.164: a plus sign, the country code and the number, and a number that can really exist. */
export const e164Phone = z
  .string()
  .trim()
  .refine((v) => /^\+[1-9]\d{6,14}$/.test(v) && isValidPhoneNumber(v), {
    message: 'must be a valid phone number in E.164 format, e.g. +14155550123',
  })
  .meta({ pattern: '^\\+[1-9]\\d{6,14}$', description: 'E.164 phone number', examples: ['+14155550123'] });

/** A real calendar date (YYYY-MM-DD), in the past, not before 1900. */
export const pastDate = z
  .string()
  .refine((v) => {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(v)) return false;
    const d = new Date(`${v}T00:00:00.000Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v;
  }, { message: 'must be a real date in YYYY-MM-DD format' })
  .refine((v) => v >= '1900-01-01' && new Date(`${v}T00:00:00.000Z`).getTime() < Date.now(), {
    message: 'must be a date in the past, after 1900-01-01',
  })
  .meta({ format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A past date, YYYY-MM-DD', examples: ['1990-04-12'] });

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The text rule every string of a request obeys, whatever its field: PostgreSQL's text cannot hold
 * NUL, its JSON cannot hold a lone surrogate (and a UTF-8 encoder silently turns one into U+FFFD),
 * and an empty string is never a value (leave the field out instead). Why `value` breaks it, if it does.
 */
export function textRuleBreach(value: string, opts: { allowEmpty?: boolean } = {}): string | undefined {
  if (value.length === 0) return opts.allowEmpty ? undefined : 'must not be empty (leave the field out instead)';
  if (value.includes('\u0000')) return 'must not contain NUL characters (\\u0000)';
  if (LONE_SURROGATE.test(value)) return 'must not contain unpaired UTF-16 surrogates';
  return undefined;
}

/** How deep a request's JSON may nest: far beyond any body the API takes, far below a stack's limit. */
export const MAX_JSON_DEPTH = 64;

/**
 * Where a parsed JSON value nests deeper than `max` levels (the path down to the first level too
 * deep), or undefined. Walks with its own stack, never recursion: a body nested 200,000 deep is
 * measured, not overflowed on.
 */
export function jsonDepthBreach(value: unknown, max = MAX_JSON_DEPTH): { key: string; reason: string } | undefined {
  const pending: { value: unknown; path: string[] }[] = [{ value, path: [] }];
  while (pending.length > 0) {
    const { value: v, path } = pending.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (path.length >= max) return { key: path.join('.'), reason: `nests deeper than ${max} levels` };
    for (const [k, child] of Object.entries(v)) if (child !== null && typeof child === 'object') pending.push({ value: child, path: [...path, k] });
  }
  return undefined;
}

/**
 * The first string in a request's value (a JSON body, the query or the path parameters), object keys
 * included, that breaks the text rule: its dotted path and why. Keys may be empty (the schema names
 * an unknown one); values may not.
 */
export function findTextRuleBreach(value: unknown, path: string[] = []): { key: string; reason: string } | undefined {
  // Bounded recursion: a value nested deeper is refused for that, before it could overflow the stack.
  if (path.length === 0) {
    const tooDeep = jsonDepthBreach(value);
    if (tooDeep) return tooDeep;
  }
  if (typeof value === 'string') {
    const reason = textRuleBreach(value);
    return reason ? { key: path.join('.'), reason } : undefined;
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = findTextRuleBreach(item, [...path, String(i)]);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const keyReason = textRuleBreach(k, { allowEmpty: true });
      if (keyReason) return { key: [...path, k].join('.'), reason: `field names ${keyReason}` };
      const found = findTextRuleBreach(v, [...path, k]);
      if (found) return found;
    }
  }
  return undefined;
}
