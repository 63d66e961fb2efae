import { Client, Connection } from '@temporalio/client';
import { createTenant, documents, individual, stack, temporalClient, waitForKycStatus } from '../harness';

// Workflow histories hold no PII or secrets in the clear: every payload the platform sends to
// Temporal is encrypted (src/temporal/payload-codec.ts); the Web UI decodes them through the API's
// /codec endpoint, which answers only this machine.

test("a KYC workflow's history, read without the key, shows no personal data; the codec endpoint decodes it", async () => {
  const t = await createTenant();
  const marker = `Zyxwvut${Date.now()}`;
  const c = (await t.api.post('/v0/customers', individual({ last_name: marker, email: `${marker.toLowerCase()}@example.com` }))).body;
  await t.api.post(`/v0/customers/${c.id}/kyc`, documents());
  await waitForKycStatus(t.api, c.id, 'approved');
  await (await temporalClient()).workflow.getHandle(`kyc:${c.id}`).result();

  // What the Temporal server stores, as any reader of its database or UI sees it without the key.
  const connection = await Connection.connect({ address: stack().temporalAddress });
  try {
    const raw = await new Client({ connection, namespace: stack().namespace }).workflow.getHandle(`kyc:${c.id}`).fetchHistory();
    const text = JSON.stringify(raw);
    expect(text.toLowerCase()).not.toContain(marker.toLowerCase());
    const started = raw.events!.find((e) => e.workflowExecutionStartedEventAttributes)!.workflowExecutionStartedEventAttributes!;
    const input = started.input!.payloads![0]!;
    expect(Buffer.from(input.metadata!.encoding!).toString()).toBe('binary/encrypted');
    expect(Buffer.from(input.data!).toString()).not.toContain(c.id);

    // The UI's codec: this machine only, CORS for the UI's origin, the payload decoded.
    const wire = { payloads: [{ metadata: Object.fromEntries(Object.entries(input.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])), data: Buffer.from(input.data!).toString('base64') }] };
    const res = await fetch(`${stack().apiUrl}/codec/decode`, {
      method: 'POST', headers: { 'Content-Type': 'application/json', Origin: 'http://localhost:8233', 'X-Namespace': stack().namespace }, body: JSON.stringify(wire),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    const decoded = (await res.json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
    expect(Buffer.from(decoded.payloads[0]!.metadata.encoding!, 'base64').toString()).toBe('json/plain');
    expect(Buffer.from(decoded.payloads[0]!.data, 'base64').toString()).toContain(c.id);
    const foreignOrigin = await fetch(`${stack().apiUrl}/codec/decode`, { method: 'OPTIONS', headers: { Origin: 'https://evil.example' } });
    expect(foreignOrigin.headers.get('access-control-allow-origin')).toBeNull();
  } finally {
    await connection.close();
  }
});
