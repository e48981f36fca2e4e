// The auth cache (src/server/auth/cache.ts): a credential is read from the database once, not
// on every request, and stays exactly as strict: a change made anywhere (here straight in the
// database, as another server process, a script or psql would) holds from the next request.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { observeQueries } from '../src/server/db/query-observers.js';
import { AuthCache } from '../src/server/auth/cache.js';
import { buildTestApp, call, expectProblem, forEachDatabase, newApiKey, newOperator } from './helpers.js';

forEachDatabase('Auth cache', (engine) => {
  test('a known key is not read again: one small read of auth_state per request', async (t) => {
    const ta = await buildTestApp(t, engine);
    const key = await newApiKey(ta, ['leads:view']);
    const whoami = () => call(ta.app, key.secret, { method: 'GET', url: '/api/auth/whoami' });
    assert.equal((await whoami()).statusCode, 200);
    assert.equal((await whoami()).statusCode, 200); // last_used_at is stamped by now: nothing moves
    const seen: string[] = [];
    const stop = observeQueries(ta.db, (e) => seen.push(e.query.sql));
    assert.equal((await whoami()).statusCode, 200);
    stop();
    // The handler reads the key to show it; authentication (the secret's hash, the role) does not.
    assert.ok(
      !seen.some((q) => /secret_hash|"roles"."permissions"|ip_allowlist/.test(q)),
      `no credential read: ${seen.join(' | ')}`,
    );
    assert.equal(seen.filter((q) => /auth_state/.test(q)).length, 1);
  });

  test('changes written straight to the database hold from the next request: key revoked, operator disabled, role narrowed, session ended, allow-list', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view', 'analytics:view']);
    const key = await newApiKey(ta, ['leads:view'], { token: op.token });
    const get = (token: string, url = '/api/leads/search') => call(ta.app, token, { method: 'GET', url });
    for (const tk of [op.token, key.secret]) assert.equal((await get(tk)).statusCode, 200);

    // The role loses leads:view: both the session and the key are refused at once.
    await ta.db
      .updateTable('roles')
      .set({ permissions: JSON.stringify(['analytics:view']) })
      .where('id', '=', op.roleId)
      .execute();
    expectProblem(await get(op.token), 403, 'forbidden');
    expectProblem(await get(key.secret), 403, 'forbidden');
    await ta.db
      .updateTable('roles')
      .set({ permissions: JSON.stringify(['leads:view', 'analytics:view']) })
      .where('id', '=', op.roleId)
      .execute();
    assert.equal((await get(key.secret)).statusCode, 200);

    // The key revoked.
    await ta.db
      .updateTable('api_keys')
      .set({ revoked_at: new Date().toISOString() })
      .where('id', '=', key.id)
      .execute();
    expectProblem(await get(key.secret), 401, 'unauthorized');
    assert.equal((await get(op.token)).statusCode, 200);

    // The account allow-list shuts out the test client's address, then is emptied.
    await ta.db
      .insertInto('settings')
      .values({ key: 'ip_allowlist', value: JSON.stringify(['198.51.100.0/24']), updated_at: new Date().toISOString() })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: JSON.stringify(['198.51.100.0/24']) }))
      .execute();
    expectProblem(await get(op.token), 403, 'ip_not_allowed');
    await ta.db.deleteFrom('settings').where('key', '=', 'ip_allowlist').execute();
    assert.equal((await get(op.token)).statusCode, 200);

    // The operator disabled; then the session itself ended.
    await ta.db.updateTable('operators').set({ status: 'disabled' }).where('id', '=', op.id).execute();
    expectProblem(await get(op.token), 401, 'unauthorized');
    await ta.db.updateTable('operators').set({ status: 'active' }).where('id', '=', op.id).execute();
    assert.equal((await get(op.token)).statusCode, 200);
    await ta.db.deleteFrom('sessions').where('operator_id', '=', op.id).execute();
    expectProblem(await get(op.token), 401, 'unauthorized');

    // An idle session written back in time expires, as without the cache.
    const owner = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/auth/whoami' });
    assert.equal(owner.statusCode, 200);
    await ta.db.updateTable('sessions').set({ last_seen_at: '2020-01-01T00:00:00.000Z' }).execute();
    expectProblem(await get(ta.ownerToken, '/api/auth/whoami'), 401, 'unauthorized');
  });

  test('a row read while the generation moved on is not kept', async (t) => {
    const ta = await buildTestApp(t, engine);
    const cache = new AuthCache();
    const g0 = await cache.sync(ta.db);
    let loads = 0;
    // The change commits between reading the generation and reading the row.
    const stale = await cache.row('k', g0, async () => {
      loads++;
      await sql`update auth_state set generation = generation + 1 where id = 1`.execute(ta.db);
      return { revoked: false };
    });
    assert.deepEqual(stale, { revoked: false });
    const g1 = await cache.sync(ta.db);
    assert.notEqual(g1, g0);
    const fresh = await cache.row('k', g1, async () => (loads++, { revoked: true }));
    assert.deepEqual(fresh, { revoked: true });
    assert.deepEqual(
      await cache.row('k', g1, async () => (loads++, { revoked: 'never read' })),
      { revoked: true },
      'kept under the new generation',
    );
    assert.equal(loads, 2);
  });
});
