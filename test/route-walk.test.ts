// Walks every route the server registered (its own route table, so a route is covered the day
// it is added), over real HTTP on loopback, with many spellings of its path:
//   - with no credential: never a 2xx or 3xx where the route needs access, never a 5xx;
//   - with an API key holding every :view scope: never a 2xx on a write;
//   - and nothing in the database changed.
// Access must follow the route that runs, whatever the spelling (contract rules 12 and 6).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALL_PERMISSIONS } from '../src/server/auth/permissions.js';
import type { DB } from '../src/server/db/database.js';
import type { App } from '../src/server/types.js';
import { buildTestApp, forEachDatabase, newApiKey } from './helpers.js';
import { sendRaw } from './raw-http.js';
import { spellings } from './path-spellings.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A concrete path for a route pattern: every :param filled with a harmless value. */
const concrete = (pattern: string) => pattern.replace(/:[A-Za-z_]+/g, 'x1').replace(/\*$/, 'index.html');

/** One request over real HTTP, the target verbatim; writes carry an empty JSON object. */
const send = (port: number, method: string, target: string, headers: Record<string, string>) =>
  sendRaw(port, method, target, headers, WRITES.has(method) ? '{}' : undefined);

/** Row counts of every table: a refused request must leave them as they were. */
async function snapshot(db: DB): Promise<Record<string, number>> {
  const tables = (await db.introspection.getTables()).map((t) => t.name).filter((n) => !n.startsWith('kysely_'));
  const out: Record<string, number> = {};
  for (const name of tables.sort()) {
    const row = await db
      .selectFrom(name as never)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    out[name] = Number(row.n);
  }
  return out;
}

const routesOf = (app: App) => app.routeTable.map((r) => ({ ...r, path: concrete(r.url) }));

forEachDatabase('route walk', (engine) => {
  test('every route, every spelling, no credential: never 2xx where access is needed, never 5xx, nothing written', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { RATE_LIMIT_PER_IP: '0', RATE_LIMIT_PER_KEY: '0' } });
    await ta.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (ta.app.server.address() as { port: number }).port;
    const origin = `http://127.0.0.1:${port}`;
    // "/API/…" is no API path: the dashboard's page answers it, which holds no data.
    const dashboardPage = (await send(port, 'GET', '/', {})).body;
    assert.match(dashboardPage, /<div id="root">|<html/);
    const before = await snapshot(ta.db);
    const routes = routesOf(ta.app);
    assert.ok(routes.length > 60, `the route table has ${routes.length} routes`);
    const failures: string[] = [];
    let sent = 0;
    for (const r of routes) {
      for (const target of spellings(r.path, origin)) {
        const res = await send(port, r.method, target, {});
        sent++;
        const open = r.access.public;
        if (res.status >= 500) failures.push(`${r.method} ${target} → ${res.status} ${res.body.slice(0, 200)}`);
        else if (!open && res.status < 400 && res.body !== dashboardPage)
          failures.push(`${r.method} ${target} → ${res.status} without a credential`);
      }
    }
    assert.deepEqual(failures, [], `${failures.length} of ${sent} requests misbehaved`);
    assert.deepEqual(await snapshot(ta.db), before, 'anonymous requests changed the database');
  });

  test('every write route, every spelling, with a key holding every :view scope: refused, nothing written', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { RATE_LIMIT_PER_IP: '0', RATE_LIMIT_PER_KEY: '0' } });
    const views = ALL_PERMISSIONS.filter((p) => p.endsWith(':view'));
    const key = await newApiKey(ta, views);
    await ta.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (ta.app.server.address() as { port: number }).port;
    const origin = `http://127.0.0.1:${port}`;
    const writes = routesOf(ta.app).filter(
      // Portal routes refuse every operator credential with 401 (test/portal-walk.test.ts).
      (r) => WRITES.has(r.method) && !r.access.public && !r.access.intake && !r.access.postback && !r.access.portal,
    );
    assert.ok(writes.length > 25, `${writes.length} write routes`);
    const before = await snapshot(ta.db);
    const failures: string[] = [];
    for (const r of writes) {
      const targets = spellings(r.path, origin);
      for (const target of targets) {
        const res = await send(port, r.method, target, { authorization: `Bearer ${key.secret}` });
        if (res.status < 400 || res.status >= 500)
          failures.push(`${r.method} ${target} → ${res.status} ${res.body.slice(0, 200)}`);
      }
      // The plain spelling reaches the route and is refused for the key's scope or for being a key.
      const plain = await send(port, r.method, r.path, { authorization: `Bearer ${key.secret}` });
      const code = plain.status === 403 ? JSON.parse(plain.body).code : null;
      if (!['insufficient_scope', 'session_required'].includes(code))
        failures.push(`${r.method} ${r.path} → ${plain.status} ${plain.body.slice(0, 200)}`);
    }
    assert.deepEqual(failures, []);
    // last_used_at of the key moves; nothing else may.
    assert.deepEqual(await snapshot(ta.db), before, 'a view-only key changed the database');
  });
});

test('spellings cover the tricks of the original finding', () => {
  const s = spellings('/api/operators', 'http://127.0.0.1:1');
  for (const t of [
    '/%61pi/operators',
    '/ap%69/operators',
    'http://127.0.0.1:1/api/operators',
    '/api/%2e%2e/api/operators',
  ]) {
    assert.ok(s.includes(t), t);
  }
  assert.ok(s.length >= 12);
});
