import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, expectProblem, forEachDatabase, getJson } from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { purgeVelocityKeys } from './velocity.js';

forEachDatabase('Velocity flags', (engine) => {
  test("more leads than the provider's limit from one IP, phone or email domain in its window are flagged", async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], {
      provider: { velocity: { window_minutes: 60, ip: 2, phone: 1, email_domain: 3 } },
    });
    const other = await makeWorld(t, ta, [{}]);
    let n = 0;
    // Each lead its own email domain unless the test gives one.
    const lead = (over: Record<string, unknown>) => sampleLead({ email: `u${++n}@d${n}.test`, ...over });
    const flagsOf = async (token: string, over: Record<string, unknown>) => {
      const res = await postLead(ta, token, lead(over));
      assert.equal(res.statusCode, 201, res.body);
      return (await getJson(ta, `/api/leads/${res.json().id}`)).flags as string[];
    };
    const v = (flags: string[]) => flags.filter((f) => f.startsWith('velocity_'));
    // Two leads from one IP are within the limit; the third (two earlier ones) is flagged.
    assert.deepEqual(v(await flagsOf(w.token, { ip: '198.51.100.1' })), []);
    assert.deepEqual(v(await flagsOf(w.token, { ip: '198.51.100.1' })), []);
    assert.deepEqual(v(await flagsOf(w.token, { ip: '198.51.100.1' })), ['velocity_ip']);
    // Another provider's leads are its own: no limit set, nothing counted, nothing flagged.
    assert.deepEqual(v(await flagsOf(other.token, { ip: '198.51.100.1' })), []);
    assert.equal(
      Number(
        (
          await ta.db
            .selectFrom('lead_velocity')
            .select((e) => e.fn.countAll().as('n'))
            .where('traffic_provider_id', '=', other.providerId)
            .executeTakeFirstOrThrow()
        ).n,
      ),
      0,
    );
    // A phone seen once before, under another email (no duplicate check on phone here: a
    // different provider policy would call it a duplicate first).
    await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/traffic-providers/${w.providerId}`,
      payload: { duplicate_policy: { fields: ['email'], window_hours: 1, scope: 'provider' } },
    });
    assert.deepEqual(v(await flagsOf(w.token, { phone: '+4915199990000', ip: '198.51.100.20' })), []);
    assert.deepEqual(v(await flagsOf(w.token, { phone: '+4915199990000', ip: '198.51.100.21' })), ['velocity_phone']);
    // An email domain: three earlier leads with it are the limit.
    for (let i = 0; i < 3; i++)
      assert.deepEqual(v(await flagsOf(w.token, { email: `z${i}@busy.test`, ip: `198.51.100.${30 + i}` })), []);
    assert.deepEqual(v(await flagsOf(w.token, { email: 'z9@BUSY.test', ip: '198.51.100.39' })), [
      'velocity_email_domain',
    ]);
    // The flag takes its weight off the score.
    const res = await postLead(
      ta,
      w.token,
      lead({ ip: '198.51.100.1', phone: '+4915199990000', email: 'y@busy.test' }),
    );
    const scored = await getJson(ta, `/api/leads/${res.json().id}`);
    assert.deepEqual(v(scored.flags), ['velocity_ip', 'velocity_phone', 'velocity_email_domain']);
    assert.equal(scored.quality_score, 10);

    // Out of the window: keys older than it do not count (here: moved back two hours), and the purge deletes them.
    await ta.db
      .updateTable('lead_velocity')
      .set({ created_at: new Date(Date.now() - 2 * 3_600_000).toISOString() })
      .execute();
    assert.deepEqual(v(await flagsOf(w.token, { ip: '198.51.100.1' })), []);
    assert.ok((await purgeVelocityKeys(ta.db, new Date(Date.now() - 3_600_000).toISOString())) > 5);
  });

  test('the velocity policy is part of the provider: shown, replaced whole, bad values named', async (t) => {
    const ta = await buildTestApp(t, engine);
    const created = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/traffic-providers',
      payload: { name: 'P' },
    });
    assert.deepEqual(created.json().velocity, { window_minutes: 60, ip: null, phone: null, email_domain: null });
    const patch = (velocity: object) =>
      call(ta.app, ta.ownerToken, {
        method: 'PATCH',
        url: `/api/traffic-providers/${created.json().id}`,
        payload: { velocity },
      });
    const ok = await patch({ window_minutes: 1440, ip: 5, phone: null, email_domain: 50 });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(ok.json().velocity, { window_minutes: 1440, ip: 5, phone: null, email_domain: 50 });
    const bad = expectProblem(await patch({ window_minutes: 0, ip: 0, phone: null }), 400, 'validation_failed');
    assert.ok(bad.errors!.length >= 1, JSON.stringify(bad));
  });
});
