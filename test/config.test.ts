import { ConfigError, loadConfig } from '../src/config';

// Pure logic: configuration parsing and its error messages.

test('defaults give the embedded stack', () => {
  const c = loadConfig({});
  expect(c.PORT).toBe(3000);
  expect(c.DATABASE_URL).toBeUndefined();
  expect(c.TEMPORAL_ADDRESS).toBeUndefined();
  expect(c.publicBaseUrl).toBe('http://localhost:3000');
  expect(c.SANDBOX_TIME_SCALE).toBe(1);
  expect(c.dataDir).toMatch(/\.data$/);
});

test('each bad value is named with what is expected', () => {
  expect(() =>
    loadConfig({
      PORT: 'eighty', DATABASE_URL: 'mysql://x', TEMPORAL_ADDRESS: 'localhost', REDIS_URL: 'http://r',
      SANDBOX_TIME_SCALE: '0', DATA_ENCRYPTION_KEY: 'c2hvcnQ=', LOG_LEVEL: 'loud',
    }),
  ).toThrow(ConfigError);
  try {
    loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', TEMPORAL_ADDRESS: 'localhost', DATA_ENCRYPTION_KEY: 'c2hvcnQ=' });
  } catch (err) {
    const message = (err as Error).message;
    expect(message).toContain('PORT:');
    expect(message).toContain('DATABASE_URL: must start with postgres://');
    expect(message).toContain('TEMPORAL_ADDRESS: must be host:port');
    expect(message).toContain('DATA_ENCRYPTION_KEY: must be 32 bytes');
  }
});

test('PUBLIC_BASE_URL loses a trailing slash', () => {
  expect(loadConfig({ PUBLIC_BASE_URL: 'https://pay.example.com/' }).publicBaseUrl).toBe('https://pay.example.com');
});
