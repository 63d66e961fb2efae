import { z } from 'zod';

/** An object id in responses: its prefix and the base62 body (plain pattern, valid in any JSON Schema tool). */
export const objectId = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9A-Za-z]+$`));
