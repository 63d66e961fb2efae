import { apiClient, createTenant, documents, individual, runCli, stack, type Tenant } from '../harness';

// Browsers call the API with publishable keys only (docs/API.md, "CORS").

let t: Tenant;
beforeAll(async () => {
  t = await createTenant();
});

const preflight = (path: string, method: string, origin = 'https://shop.example') => fetch(`${stack().apiUrl}${path}`, {
  method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': 'api-key, content-type' },
});

test('a preflight is answered for the routes publishable keys may use, and only those', async () => {
  const customer = (await t.api.post('/v0/customers', individual())).body;
  const kyc = await preflight(`/v0/customers/${customer.id}/kyc`, 'POST');
  expect(kyc.status).toBe(204);
  expect(kyc.headers.get('access-control-allow-origin')).toBe('https://shop.example');
  expect(kyc.headers.get('access-control-allow-methods')).toBe('POST');
  expect(kyc.headers.get('access-control-allow-headers')).toMatch(/Api-Key/);
  for (const [path, method] of [['/v0/customers', 'POST'], ['/v0/transfers', 'POST'], [`/v0/customers/${customer.id}`, 'GET'], [`/v0/customers/${customer.id}/kyc`, 'DELETE']]) {
    const res = await preflight(path, method);
    expect([path, method, res.status, res.headers.get('access-control-allow-origin')]).toEqual([path, method, 204, null]);
  }
});

test('a secret key sent from a browser origin is refused with a clear error, and changes nothing', async () => {
  const res = await t.api.post('/v0/customers', individual(), { headers: { Origin: 'https://shop.example' } });
  expect(res.status).toBe(403);
  expect(res.body.error).toMatchObject({ code: 'forbidden', source: { location: 'header', key: 'Origin' } });
  expect(res.body.error.message).toMatch(/Secret keys must never be used from a browser/);
  expect(res.headers.get('access-control-allow-origin')).toBeNull();
  // Without an Origin (a server), the same key works.
  expect((await t.api.get('/v0/customers')).status).toBe(200);
});

test('sandbox publishable keys work from any origin by default; live ones from none until origins are allowed', async () => {
  const customer = (await t.api.post('/v0/customers', individual())).body;
  const sandbox = apiClient(t.publishable);
  const submitted = await sandbox.post(`/v0/customers/${customer.id}/kyc`, documents(), { headers: { Origin: 'https://shop.example' } });
  expect(submitted.status).toBeLessThan(300);
  expect(submitted.headers.get('access-control-allow-origin')).toBe('*');
  expect(submitted.headers.get('access-control-expose-headers')).toMatch(/Request-Id/);

  const livePublishable = apiClient((await t.key({ environment: 'production', kind: 'publishable' })).key);
  const liveCustomer = (await apiClient(t.liveSecret).post('/v0/customers', individual())).body;
  const refused = await livePublishable.post(`/v0/customers/${liveCustomer.id}/kyc`, documents(), { headers: { Origin: 'https://shop.example' } });
  expect([refused.status, refused.body.error?.source]).toEqual([403, { location: 'header', key: 'Origin' }]);

  expect(runCli(['developers', 'allow-origins', t.developerId, '--origin', 'https://shop.example']).status).toBe(0);
  expect(runCli(['developers', 'allow-origins', t.developerId, '--origin', 'https://shop.example/path']).status).not.toBe(0);
  // The key's cache holds the old list for up to 2 s.
  await new Promise((r) => setTimeout(r, 2_100));
  const allowed = await livePublishable.post(`/v0/customers/${liveCustomer.id}/kyc`, documents(), { headers: { Origin: 'https://shop.example' } });
  expect(allowed.status).toBeLessThan(300);
  expect(allowed.headers.get('access-control-allow-origin')).toBe('https://shop.example');
  const other = await livePublishable.post(`/v0/customers/${liveCustomer.id}/kyc`, documents(), { headers: { Origin: 'https://evil.example' } });
  expect(other.status).toBe(403);
  // The list now holds for the sandbox too.
  const sandboxOther = await sandbox.post(`/v0/customers/${customer.id}/kyc`, documents(), { headers: { Origin: 'https://evil.example' } });
  expect(sandboxOther.status).toBe(403);
});
