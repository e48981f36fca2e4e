import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildTestApp,
  call,
  emptyDatabase,
  expectProblem,
  forEachDatabase,
  getJson,
  newApiKey,
  newOperator,
  type TestApp,
} from '../../../../test/helpers.js';
import { openDatabase } from '../../db/database.js';
import { ALL_EVENT_TYPES, EVENT_TYPES, type EventType } from '../../events/types.js';
import { migrate } from '../../db/migrate.js';
import { createOwner, ensureAdminRole } from '../operators/service.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { startReceiver } from '../../../../test/webhook-receiver.js';

// Issue 24, finding 4: a webhook is a standing read of what its events carry, so it may only
// carry what its owner may read, now.

const post = (ta: TestApp, token: string, payload: Record<string, unknown>) =>
  call(ta.app, token, { method: 'POST', url: '/api/webhooks', payload: { name: 'Hook', ...payload } });

forEachDatabase('webhooks and read permissions', (engine) => {
  test('upgrading: a webhook made before owners were recorded is owned by the oldest active admin, who may read all it sends', async (t) => {
    const db = openDatabase(await emptyDatabase(t, engine));
    t.after(() => db.destroy());
    await migrate(db, { until: '20261126T100000Z_routing_rules' });
    await ensureAdminRole(db);
    const admin = (await createOwner(db, {
      email: 'first@example.test',
      name: 'First',
      password: 'first-password-1',
    }))!;
    const now = new Date().toISOString();
    const row = {
      name: 'Old',
      url: 'https://hooks.example.com/x',
      format: 'json',
      telegram_chat_id: null,
      event_types: '["lead.received"]',
      secret: 'whsec_AAAA',
      status: 'active',
      disabled_reason: null,
      failing_since: null,
      created_at: now,
      updated_at: now,
    };
    await db
      .insertInto('webhooks' as any)
      .values({ ...row, id: 'w-old' })
      .execute();
    await migrate(db);
    const migrated = await db.selectFrom('webhooks').select(['id', 'owner_id']).execute();
    assert.deepEqual(migrated, [{ id: 'w-old', owner_id: admin }]);
  });

  test('the server publishes every event type with the permission it takes: what the editor offers, and what a subscription is judged by', async (t) => {
    const ta = await buildTestApp(t, engine);
    const viewer = await newOperator(ta, ['webhooks:view']);
    const list = (await getJson(ta, '/api/webhooks/event-types', viewer.token)).data as {
      type: string;
      label: string;
      permission: string;
    }[];
    assert.deepEqual(
      list.map((e) => e.type),
      ALL_EVENT_TYPES,
    );
    for (const e of list) {
      assert.equal(e.permission, EVENT_TYPES[e.type as EventType].permission, e.type);
      assert.ok(e.label.length > 0 && e.label.length <= 40, e.type);
    }
    // Subscribing to each is refused exactly when the caller lacks its published permission.
    const receiver = await startReceiver(t);
    const editor = await newOperator(ta, ['webhooks:view', 'webhooks:edit', 'partners:view']);
    for (const e of list) {
      const res = await post(ta, editor.token, { url: receiver.url, event_types: [e.type] });
      assert.equal(res.statusCode, ['partners:view', 'webhooks:view'].includes(e.permission) ? 201 : 403, e.type);
    }
  });

  test('subscribing to events you may not read is refused with 403 naming them, for an operator and for a key; redirecting a webhook too', async (t) => {
    const ta = await buildTestApp(t, engine);
    const receiver = await startReceiver(t);
    const editor = await newOperator(ta, ['webhooks:view', 'webhooks:edit']);
    const refused = expectProblem(
      await post(ta, editor.token, {
        url: receiver.url,
        event_types: ['lead.received', 'lead.delivered', 'webhook.disabled'],
      }),
      403,
      'forbidden',
    );
    assert.match(refused.detail, /lead\.received \(leads:view\), lead\.delivered \(leads:view\)\.$/);
    assert.doesNotMatch(refused.detail, /webhook\.disabled/, 'only what the caller may not read is named');
    // A key is judged on its own scopes, even when its operator's role would allow more.
    const key = await newApiKey(ta, ['webhooks:view', 'webhooks:edit']);
    assert.match(
      expectProblem(
        await post(ta, key.secret, { url: receiver.url, event_types: ['partner.cap_full'] }),
        403,
        'insufficient_scope',
      ).detail,
      /partner\.cap_full \(partners:view\)/,
    );
    assert.equal((await getJson(ta, '/api/webhooks')).data.length, 0, 'nothing made');

    // What it may read, it may subscribe to; the webhook then sends as its maker.
    const made = await post(ta, editor.token, { url: receiver.url, event_types: ['webhook.disabled'] });
    assert.equal(made.statusCode, 201, made.body);
    assert.equal(made.json().owner_id, editor.id);
    // An admin's lead webhook: the editor may rename it, not add to it, repoint it or turn it on again.
    const admins = (await post(ta, ta.ownerToken, { url: receiver.url, event_types: ['lead.received'] })).json();
    const patch = (payload: Record<string, unknown>) =>
      call(ta.app, editor.token, { method: 'PATCH', url: `/api/webhooks/${admins.id}`, payload });
    for (const body of [
      { url: 'https://attacker.example/x' },
      { event_types: ['lead.received', 'webhook.disabled'] },
      { format: 'slack' },
      { status: 'active' },
    ]) {
      assert.match(
        expectProblem(await patch(body), 403, 'forbidden').detail,
        /lead\.received \(leads:view\)/,
        JSON.stringify(body),
      );
    }
    const renamed = await patch({ name: 'Renamed' });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal(renamed.json().owner_id, ta.ownerId, 'a rename does not change who it sends as');
    const stored = await ta.db
      .selectFrom('webhooks')
      .select(['url', 'event_types'])
      .where('id', '=', admins.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([stored.url, JSON.parse(stored.event_types)], [receiver.url, ['lead.received']]);
  });

  test("the delivery log shows only deliveries of event types the reader may read; another's is not found", async (t) => {
    const ta = await buildTestApp(t, engine);
    const receiver = await startReceiver(t);
    const hook = (
      await post(ta, ta.ownerToken, { url: receiver.url, event_types: ['lead.received', 'partner.cap_full'] })
    ).json();
    const w = await makeWorld(t, ta, [{ fields: { daily_cap: 1 } }]);
    await postLead(ta, w.token, sampleLead());
    await ta.app.events.drain();
    const all = (await getJson(ta, `/api/webhooks/${hook.id}/deliveries`)).data;
    assert.deepEqual(all.map((d: any) => d.event_type).sort(), ['lead.received', 'partner.cap_full']);
    const leadDelivery = all.find((d: any) => d.event_type === 'lead.received');

    const reader = await newOperator(ta, ['webhooks:view', 'webhooks:edit', 'partners:view']);
    const theirs = await getJson(ta, `/api/webhooks/${hook.id}/deliveries`, reader.token);
    assert.deepEqual(
      theirs.data.map((d: any) => d.event_type),
      ['partner.cap_full'],
    );
    assert.ok(!JSON.stringify(theirs).includes(leadDelivery.lead_id ?? 'no lead id'), 'no lead id either');
    expectProblem(
      await call(ta.app, reader.token, {
        method: 'GET',
        url: `/api/webhooks/${hook.id}/deliveries/${leadDelivery.id}`,
      }),
      404,
      'not_found',
    );
    expectProblem(
      await call(ta.app, reader.token, {
        method: 'POST',
        url: `/api/webhooks/${hook.id}/deliveries/${leadDelivery.id}/retry`,
      }),
      404,
      'not_found',
    );
    const capDelivery = all.find((d: any) => d.event_type === 'partner.cap_full');
    assert.equal(
      (await getJson(ta, `/api/webhooks/${hook.id}/deliveries/${capDelivery.id}`, reader.token)).event_type,
      'partner.cap_full',
    );
  });

  test('when its owner loses the permission, is disabled or deleted, the webhook stops sending those events: cancelled, saying why', async (t) => {
    const ta = await buildTestApp(t, engine);
    const receiver = await startReceiver(t);
    const owner = await newOperator(ta, ['webhooks:view', 'webhooks:edit', 'leads:view']);
    const hook = (await post(ta, owner.token, { url: receiver.url, event_types: ['lead.received'] })).json();
    const w = await makeWorld(t, ta, [{}]);
    const lastDelivery = async () => (await getJson(ta, `/api/webhooks/${hook.id}/deliveries?limit=1`)).data[0];
    const sendOne = async () => {
      await postLead(ta, w.token, sampleLead());
      await ta.app.events.drain();
      return lastDelivery();
    };
    assert.equal((await sendOne()).state, 'delivered');
    assert.equal(receiver.received.length, 1);

    // Its role edited: no more lead events, and the delivery ends instead of retrying.
    const edited = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/roles/${owner.roleId}`,
      payload: { permissions: ['webhooks:view', 'webhooks:edit'] },
    });
    assert.equal(edited.statusCode, 200, edited.body);
    let d = await sendOne();
    assert.deepEqual([d.state, d.attempts], ['cancelled', 0]);
    assert.match(d.last_error, /owner may no longer read lead\.received events \(needs leads:view\)/);
    assert.equal(receiver.received.length, 1, 'not sent');

    // Given back, then the operator disabled.
    await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/roles/${owner.roleId}`,
      payload: { permissions: ['webhooks:view', 'webhooks:edit', 'leads:view'] },
    });
    assert.equal((await sendOne()).state, 'delivered');
    assert.equal(
      (
        await call(ta.app, ta.ownerToken, {
          method: 'PATCH',
          url: `/api/operators/${owner.id}`,
          payload: { status: 'disabled' },
        })
      ).statusCode,
      200,
    );
    d = await sendOne();
    assert.equal(d.state, 'cancelled');
    assert.match(d.last_error, /owner is disabled/);

    // Deleted: the webhook has no owner until someone who may read its events takes it over.
    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/operators/${owner.id}` })).statusCode,
      204,
    );
    assert.equal((await getJson(ta, `/api/webhooks/${hook.id}`)).owner_id, null);
    assert.match((await sendOne()).last_error, /no owner/);
    const taken = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/webhooks/${hook.id}`,
      payload: { status: 'active' },
    });
    assert.equal(taken.json().owner_id, ta.ownerId);
    assert.equal((await sendOne()).state, 'delivered');
    assert.equal(receiver.received.length, 3);
  });
});
