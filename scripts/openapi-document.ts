// Writes the OpenAPI document the API serves (GET /v0/openapi.json) to a file, for the linters
// (`npm run lint:openapi`) and the SDK's type generation (sdk/). Usage: tsx scripts/openapi-document.ts OUT [BASE_URL]
import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '../src/api/openapi';
import { allRoutes } from '../src/resources';
import { EVENT_PAYLOADS } from '../src/resources/events/payloads';

const [out, baseUrl = 'https://api.financial-platform.io'] = process.argv.slice(2);
if (!out) throw new Error('usage: tsx scripts/openapi-document.ts OUT [BASE_URL]');
writeFileSync(out, `${JSON.stringify(buildOpenApiDocument(allRoutes, baseUrl, EVENT_PAYLOADS), null, 2)}\n`);
