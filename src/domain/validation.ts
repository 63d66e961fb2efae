import countries from 'i18n-iso-countries';
import { isValidPhoneNumber } from 'libphonenumber-js';
import { z } from 'zod';

/** ISO 3166-1 alpha-2; lower-case input is accepted and normalised to upper case. */
export const countryCode = z
  .string()
  .trim()
  .transform((v) => v.toUpperCase())
  .refine((v) => /^[A-Z]{2}$/.test(v) && countries.isValid(v), { message: 'must be an ISO 3166-1 alpha-2 country code' });

/** E.164: a plus sign, the country code and the number, and a number that can really exist. */
export const e164Phone = z
  .string()
  .trim()
  .refine((v) => /^\+[1-9]\d{6,14}$/.test(v) && isValidPhoneNumber(v), {
    message: 'must be a valid phone number in E.164 format, e.g. +14155550123',
  });

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
  });
