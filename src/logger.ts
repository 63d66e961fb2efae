import pino from 'pino';

/**
 * Structured JSON logs. Request bodies are never logged; the paths below are redacted in case a
 * caller passes a whole object by mistake, so keys, tokens, tax ids and documents never reach logs.
 */
export function createLogger(level: string, name: string) {
  return pino({
    name,
    level,
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'api_key', 'apiKey', 'key', 'secret', 'token', 'tax_id', 'document_front', 'selfie',
        'headers["api-key"]', 'req.headers["api-key"]', '*.tax_id', '*.document_front', '*.selfie',
        '*.secret', '*.token', 'account_number', 'iban', '*.account_number', '*.iban',
      ],
      censor: '[redacted]',
    },
  });
}

export type Logger = pino.Logger;
