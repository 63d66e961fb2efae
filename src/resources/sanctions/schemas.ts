import { z } from 'zod';
import { objectId } from '../../ids';
import { ScreeningSchema } from '../../sanctions/screenings';
import { listParams, listSchema } from '../../api/pagination';
import { countryCode, pastDate } from '../../domain/validation';

export const ScreenInput = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(300),
  date_of_birth: pastDate.optional(),
  country: countryCode.optional(),
  type: z.enum(['individual', 'business']).optional().describe('Screen against listed people or organisations only'),
  customer_id: z.string().optional().describe('Links the screening to a customer'),
});
export type ScreenInputType = z.output<typeof ScreenInput>;

export const ScreeningListQuery = z.strictObject({
  ...listParams,
  status: z.enum(['clear', 'potential_match']).optional(),
  customer_id: z.string().optional(),
  batch_id: z.string().optional(),
});

export const ScreeningListSchema = listSchema(ScreeningSchema, 'Screening');

export const BatchEntityInput = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(300),
  type: z.enum(['individual', 'business']).optional(),
  country: countryCode.optional(),
  date_of_birth: pastDate.optional(),
});

export const MAX_BATCH = 10_000;

export const BatchInput = z.strictObject({
  entities: z.array(BatchEntityInput).min(1, 'must hold at least one entity').max(MAX_BATCH, `at most ${MAX_BATCH} entities per batch`),
});

export const ScreeningBatchSchema = z
  .object({
    id: objectId('sbat'),
    object: z.literal('screening_batch'),
    status: z.enum(['processing', 'completed', 'failed']),
    total: z.number().int(),
    processed: z.number().int(),
    potential_matches: z.number().int(),
    progress: z.number().min(0).max(1),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    completed_at: z.iso.datetime().nullable(),
    screenings: ScreeningListSchema.optional().describe('When completed: a page of the screenings, in batch order (limit, cursor)'),
  })
  .meta({ id: 'ScreeningBatch' });
