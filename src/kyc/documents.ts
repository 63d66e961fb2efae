import { invalidField } from '../errors';

const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
const MIN_IMAGE_BYTES = 64;

const SIGNATURES: { mime: string; test: (b: Buffer) => boolean }[] = [
  { mime: 'image/jpeg', test: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { mime: 'image/png', test: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { mime: 'image/webp', test: (b) => b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP' },
];

/**
 * Decodes a `data:image/…;base64,` URI and checks that the bytes really are the declared image type
 * (JPEG, PNG or WebP) and within 64 bytes … 5 MB. Any failure is a 400 naming the field.
 */
export function decodeImageDataUri(value: string, field: string): { mime: string; bytes: Buffer } {
  const match = /^data:(image\/(?:jpeg|jpg|png|webp));base64,([A-Za-z0-9+/]+={0,2})$/.exec(value);
  if (!match) {
    throw invalidField('body', field, `'${field}' must be a base64 data URI of a JPEG, PNG or WebP image (data:image/png;base64,…)`);
  }
  const declared = match[1] === 'image/jpg' ? 'image/jpeg' : match[1];
  const bytes = Buffer.from(match[2], 'base64');
  if (bytes.length > MAX_IMAGE_BYTES) throw invalidField('body', field, `'${field}' is larger than 5 MB`);
  if (bytes.length < MIN_IMAGE_BYTES) throw invalidField('body', field, `'${field}' is too small to be an image`);
  const detected = SIGNATURES.find((s) => s.test(bytes))?.mime;
  if (!detected) throw invalidField('body', field, `'${field}' is not a JPEG, PNG or WebP image`);
  if (detected !== declared) throw invalidField('body', field, `'${field}' is declared ${declared} but contains ${detected}`);
  return { mime: detected, bytes };
}
