// Intake's kept provider rows (src/server/auth/machine-tokens.ts): a provider posting lead after
// lead is not read by its token for every lead, and stays exactly as strict: a change made
// anywhere (here straight in the database, as another server process, a script or psql would)
// holds from the next lead, confirmed by intake's own read (modules/intake/service.ts storeLead).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hashSecret } from '../src/server/auth/credentials.js';
import { observeQueries } from '../src/server/db/query-observers.js';
import { makeWorld, postLead, sampleLead } from './distribution-world.js';
import { buildTestApp, expectProblem, forEachDatabase, leadCount, type TestApp } from './helpers.js';

/** Changes the provider straight in the database, as another process would. */
const change = (ta: TestApp, id: string, values: Record<string, string | null>) =>
  ta.db.updateTable('traffic_providers').set(values).where('id', '=', id).execute();

forEachDatabase('Intake provider rows kept', (engine) => {
  test("a provider's second lead does not read its token's row", async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    assert.equal((await postLead(ta, w.token, sampleLead())).statusCode, 201);
    const seen: string[] = [];
    const stop = observeQueries(ta.db, (e) => seen.push(e.query.sql));
    assert.equal((await postLead(ta, w.token, sampleLead())).statusCode, 201);
    stop();
    assert.ok(!seen.some((q) => /"token_id" =/.test(q)), `no read by token: ${seen.join(' | ')}`);
    assert.equal(await leadCount(ta), 2);
  });

  test('changes written straight to the database hold from the next lead: paused, refused address, archived, token replaced', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const ok = async () => assert.equal((await postLead(ta, w.token, sampleLead())).statusCode, 201);
    await ok();

    await change(ta, w.providerId, { status: 'paused' });
    expectProblem(await postLead(ta, w.token, sampleLead()), 403, 'provider_paused');
    // An invalid lead is refused for what the provider is now, not for its fields.
    expectProblem(await postLead(ta, w.token, sampleLead({ email: 'not-an-email' })), 403, 'provider_paused');
    await change(ta, w.providerId, { status: 'active' });
    await ok();

    await change(ta, w.providerId, { allowed_ips: JSON.stringify(['198.51.100.0/24']) });
    expectProblem(await postLead(ta, w.token, sampleLead()), 403, 'ip_not_allowed');
    await change(ta, w.providerId, { allowed_ips: '[]' });
    await ok();

    await change(ta, w.providerId, { archived_at: new Date().toISOString() });
    expectProblem(await postLead(ta, w.token, sampleLead()), 401, 'unauthorized');
    await change(ta, w.providerId, { archived_at: null });
    await ok();

    // The token replaced (its hash is another secret's): the old one is refused at once.
    await change(ta, w.providerId, { token_hash: hashSecret('another secret altogether') });
    expectProblem(await postLead(ta, w.token, sampleLead()), 401, 'unauthorized');
    expectProblem(await postLead(ta, w.token, sampleLead({ email: 'not-an-email' })), 401, 'unauthorized');
    assert.equal(await leadCount(ta), 4, 'a refused lead is not stored');
  });

  test('a duplicate policy changed straight in the database judges the next lead', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const none = JSON.stringify({ fields: [], window_hours: 0, scope: 'provider' });
    await change(ta, w.providerId, { duplicate_policy: none });
    const lead = sampleLead();
    const first = await postLead(ta, w.token, lead);
    assert.equal(first.statusCode, 201);
    assert.notEqual(first.json().status, 'duplicate');
    const again = await postLead(ta, w.token, lead);
    assert.notEqual(again.json().status, 'duplicate', 'no policy: the same lead twice is no duplicate');

    await change(ta, w.providerId, {
      duplicate_policy: JSON.stringify({ fields: ['email'], window_hours: 24, scope: 'provider' }),
    });
    const third = await postLead(ta, w.token, lead);
    assert.equal(third.statusCode, 201);
    assert.equal(third.json().status, 'duplicate', 'the policy now checks emails: found');
    assert.equal(await leadCount(ta), 3, 'each lead stored once');
  });
});
