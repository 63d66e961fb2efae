import { z } from 'zod';
import { ApiError, ERROR_CODES, invalidField, type SourceLocation } from '../errors';

/** Turns the first zod issue into a field-level 400. Unknown keys are named one by one. */
export function fromZodError(error: z.ZodError, location: SourceLocation): ApiError {
  const issue = error.issues[0];
  const base = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const key = [...base, issue.keys[0]].join('.');
    const what = location === 'query' ? 'query parameter' : 'field';
    return invalidField(location, key, `Unknown ${what} '${key}'`);
  }
  const key = base.join('.');
  const missing = issue.code === 'custom' && (issue.params as { missing?: boolean } | undefined)?.missing;
  if (missing) return invalidField(location, key, `Missing required field '${key}': ${issue.message}`);
  if (issue.code === 'invalid_type' && issue.input === undefined) {
    return invalidField(location, key, `Missing required ${location === 'query' ? 'parameter' : 'field'} '${key}'`);
  }
  return invalidField(location, key, key ? `Invalid '${key}': ${issue.message}` : issue.message);
}

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES).describe('What went wrong, by kind; the HTTP status follows from it (docs/API.md, "Errors")'),
      message: z.string().describe('For a person: what to change'),
      source: z
        .object({ location: z.enum(['body', 'query', 'path', 'header']), key: z.string() })
        .optional(),
    }),
  })
  .meta({ id: 'Error' });
