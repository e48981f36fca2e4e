// The committed API schema (src/web/api/schema.d.ts) must match what the server publishes now:
// the dashboard type-checks against it, so a stale copy would hide calls to removed operations.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { generateApiSchema, SCHEMA_FILE } from '../../../scripts/gen-api.js';

test("src/web/api/schema.d.ts is up to date with the server's OpenAPI document", async () => {
  const fresh = await generateApiSchema();
  const committed = readFileSync(SCHEMA_FILE, 'utf8');
  assert.ok(fresh.includes('"/api/api-keys"'), 'the generated schema describes the API-key routes');
  assert.ok(committed === fresh, 'src/web/api/schema.d.ts is stale: run `npm run gen:api` and commit the result');
});
