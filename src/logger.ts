import pino from 'pino';

/**
 * Structured JSON logs. Request bodies are never logged; the paths below are redacted in case a
 * caller passes a whole object by mistake, so keys, tokens, tax ids and documents never reach logs.
 */
export function createLogger(level: string, name: string, opts: { file?: string; consoleLevel?: string } = {}) {
  const settings = {
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
  };
  if (!opts.file) return pino(settings);
  // Everything at `level` to the file; the console only from `consoleLevel` (npm start keeps its terminal for the banner).
  return pino(settings, pino.multistream([
    { level: level as pino.Level, stream: pino.destination({ dest: opts.file, mkdir: true, sync: false }) },
    { level: (opts.consoleLevel ?? level) as pino.Level, stream: process.stdout },
  ]));
}

export type Logger = pino.Logger;
