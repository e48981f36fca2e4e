import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { insertLeads, insertTrafficProvider } from '../../../../test/fixtures.js';
import { newId, nowIso } from '../../db/ids.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  OWNER,
  type TestApp,
} from '../../../../test/helpers.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

interface Entry {
  id: string;
  at: string;
  actor_id: string | null;
  actor_email: string | null;
  via: 'session' | 'api_key' | 'system' | 'anonymous';
  ip: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  actor_name?: string | null;
  target_name?: string | null;
  details: Record<string, unknown>;
}

function fieldsOf(res: LightMyRequestResponse): string[] {
  const p = expectProblem(res, 400, 'validation_failed');
  assert.ok(Array.isArray(p.errors) && p.errors.length > 0);
  return p.errors!.map((e) => e.field);
}

async function entries(ta: TestApp, query = '', token = ta.ownerToken): Promise<Entry[]> {
  const res = await call(ta.app, token, { method: 'GET', url: `/api/audit-log?limit=500${query}` });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().next_cursor, null);
  return res.json().data;
}

/** The one entry for `action` on `targetId`. */
async function entryFor(ta: TestApp, action: string, targetId: string | null): Promise<Entry> {
  const found = (await entries(ta, `&action=${encodeURIComponent(action)}`)).filter((e) => e.target_id === targetId);
  assert.equal(found.length, 1, `one ${action} entry for ${targetId}, got ${JSON.stringify(found)}`);
  return found[0];
}

function assertActor(
  e: Entry,
  actor: { id: string; email: string },
  via: 'session' | 'api_key',
  window: [string, string],
) {
  assert.equal(e.actor_id, actor.id, `${e.action} actor_id`);
  assert.equal(e.actor_email, actor.email, `${e.action} actor_email`);
  assert.equal(e.via, via, `${e.action} via`);
  assert.equal(e.ip, '127.0.0.1', `${e.action} ip`);
  assert.match(e.at, ISO);
  assert.ok(e.at >= window[0] && e.at <= window[1], `${e.action} at ${e.at} within ${window}`);
}

/** Walks the log with `limit`, calling `between` after every page; returns the ids in order. */
async function walk(ta: TestApp, query: string, limit: number, between?: () => Promise<void>) {
  const ids: string[] = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  do {
    const url: string = `/api/audit-log?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await call(ta.app, ta.ownerToken, { method: 'GET', url });
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json();
    sizes.push(page.data.length);
    ids.push(...page.data.map((e: Entry) => e.id));
    cursor = page.next_cursor;
    if (between) await between();
    assert.ok(sizes.length < 200, 'paging terminates');
  } while (cursor);
  return { ids, sizes };
}

const allIdsInDb = async (ta: TestApp, action?: string) => {
  let q = ta.db.selectFrom('audit_log').select('id').orderBy('id', 'desc');
  if (action) q = q.where('action', '=', action);
  return (await q.execute()).map((r) => r.id);
};

forEachDatabase('audit log', (engine) => {
  test("entries name who acted and what they acted on, also after it was deleted; a lead's name only with leads:view", async (t) => {
    const ta = await buildTestApp(t, engine);
    const post = async (url: string, payload: Record<string, unknown>) => {
      const res = await call(ta.app, ta.ownerToken, { method: 'POST', url, payload });
      assert.equal(res.statusCode, 201, res.body);
      return res.json();
    };
    const role = await post('/api/roles', { name: 'Night shift', permissions: ['leads:view'] });
    const kim = await post('/api/operators', {
      email: 'kim@example.test',
      name: 'Kim',
      password: 'kim-password-123',
      role_id: role.id,
      current_password: OWNER.password,
    });
    const provider = await post('/api/traffic-providers', { name: 'Affiliate One' });
    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/operators/${kim.id}` })).statusCode,
      204,
    );
    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/roles/${role.id}` })).statusCode,
      204,
    );
    const [lead] = await insertLeads(ta.db, [
      { traffic_provider_id: await insertTrafficProvider(ta.db), first_name: 'Ada', last_name: 'Lovelace' },
    ]);
    await ta.db
      .insertInto('audit_log')
      .values({
        id: newId(),
        at: nowIso(),
        actor_id: null,
        actor_email: null,
        via: 'system',
        ip: null,
        action: 'lead.redelivered',
        target_type: 'lead',
        target_id: lead,
        details: '{}',
      })
      .execute();

    const byAction = async (action: string, token?: string) => (await entries(ta, `&action=${action}`, token))[0];
    const created = await byAction('traffic_provider.created');
    assert.deepEqual(
      [created.actor_name, created.target_name, created.target_id],
      [OWNER.name, 'Affiliate One', provider.id],
    );
    assert.equal(
      (await byAction('role.deleted')).target_name,
      'Night shift',
      'a deleted role keeps the name its entry recorded',
    );
    assert.equal(
      (await byAction('operator.deleted')).target_name,
      'kim@example.test',
      'a deleted operator keeps the email its entry recorded',
    );
    assert.equal((await byAction('role.created')).target_name, 'Night shift', 'gone since, named from the entry');
    assert.equal((await byAction('lead.redelivered')).target_name, 'Ada Lovelace');

    const auditor = await newOperator(ta, ['audit:view']);
    assert.equal(
      (await byAction('lead.redelivered', auditor.token)).target_name,
      null,
      'audit:view alone does not show lead names',
    );
    assert.equal((await byAction('traffic_provider.created', auditor.token)).target_name, 'Affiliate One');
  });

  test('role and operator changes are recorded with actor, via, ip and time', async (t) => {
    const ta = await buildTestApp(t, engine);
    const owner = { id: ta.ownerId, email: OWNER.email };
    const start = new Date().toISOString();

    const role = (
      await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: '/api/roles',
        payload: { name: 'Audited', permissions: ['leads:view'] },
      })
    ).json();
    await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/roles/${role.id}`,
      payload: { permissions: ['leads:view', 'flows:view'] },
    });
    const password = 'operator-secret-pw';
    const op = (
      await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: '/api/operators',
        payload: {
          email: 'aud@example.test',
          name: 'Aud',
          password,
          role_id: role.id,
          current_password: OWNER.password,
        },
      })
    ).json();
    await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/operators/${op.id}`,
      payload: { status: 'disabled', password: 'reset-secret-pw', current_password: OWNER.password },
    });
    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/operators/${op.id}` })).statusCode,
      204,
    );
    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/roles/${role.id}` })).statusCode,
      204,
    );
    const end = new Date().toISOString();

    const created = await entryFor(ta, 'role.created', role.id);
    assertActor(created, owner, 'session', [start, end]);
    assert.equal(created.target_type, 'role');
    assert.deepEqual(created.details.permissions, ['leads:view']);
    const updated = await entryFor(ta, 'role.updated', role.id);
    assertActor(updated, owner, 'session', [start, end]);
    assertActor(await entryFor(ta, 'role.deleted', role.id), owner, 'session', [start, end]);

    const opCreated = await entryFor(ta, 'operator.created', op.id);
    assertActor(opCreated, owner, 'session', [start, end]);
    assert.equal(opCreated.target_type, 'operator');
    assert.equal(opCreated.details.email, 'aud@example.test');
    const opUpdated = await entryFor(ta, 'operator.updated', op.id);
    assertActor(opUpdated, owner, 'session', [start, end]);
    assert.equal(opUpdated.details.password_reset, true);
    assertActor(await entryFor(ta, 'operator.deleted', op.id), owner, 'session', [start, end]);

    // The log records that a password changed, never the password.
    const all = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/audit-log?limit=500' });
    assert.ok(!all.body.includes(password));
    assert.ok(!all.body.includes('reset-secret-pw'));
    const rows = await ta.db.selectFrom('audit_log').select('details').execute();
    assert.ok(rows.every((r) => !r.details.includes(password) && !r.details.includes('reset-secret-pw')));
  });

  test('password changes and allow-list changes are recorded', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const start = new Date().toISOString();
    const pw = await call(ta.app, op.token, {
      method: 'POST',
      url: '/api/profile/password',
      payload: { current_password: op.password, new_password: 'changed-password-9' },
    });
    assert.equal(pw.statusCode, 204);
    const put = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: '/api/settings/security',
      payload: { ip_allowlist: ['127.0.0.0/8'] },
    });
    assert.equal(put.statusCode, 200, put.body);
    const end = new Date().toISOString();

    const changed = await entryFor(ta, 'profile.password_changed', op.id);
    assertActor(changed, { id: op.id, email: op.email }, 'session', [start, end]);
    assert.ok(!JSON.stringify(changed).includes('changed-password-9'));
    assert.ok(!JSON.stringify(changed).includes(op.password));

    const allow = await entryFor(ta, 'settings.ip_allowlist_updated', null);
    assertActor(allow, { id: ta.ownerId, email: OWNER.email }, 'session', [start, end]);
    assert.deepEqual(allow.details, { before: [], after: ['127.0.0.0/8'] });
  });

  test('changes made with an API key are recorded as via api_key, acting as its operator', async (t) => {
    const ta = await buildTestApp(t, engine);
    const key = await newApiKey(ta, ['roles:view', 'roles:edit', 'operators:view', 'operators:edit', 'leads:view']);
    const start = new Date().toISOString();
    const role = await call(ta.app, key.secret, {
      method: 'POST',
      url: '/api/roles',
      payload: { name: 'By key', permissions: ['leads:view'] },
    });
    assert.equal(role.statusCode, 201, role.body);
    // Creating an operator sets a password: a person's act, from a session (issue 24); a key may then change it.
    const op = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/operators',
      payload: {
        email: 'bykey@example.test',
        name: 'By Key',
        password: 'long-enough-1',
        role_id: role.json().id,
        current_password: OWNER.password,
      },
    });
    assert.equal(op.statusCode, 201, op.body);
    assert.equal(
      (
        await call(ta.app, key.secret, {
          method: 'PATCH',
          url: `/api/operators/${op.json().id}`,
          payload: { name: 'Renamed' },
        })
      ).statusCode,
      200,
    );
    const end = new Date().toISOString();
    const owner = { id: ta.ownerId, email: OWNER.email };
    assertActor(await entryFor(ta, 'role.created', role.json().id), owner, 'api_key', [start, end]);
    assertActor(await entryFor(ta, 'operator.created', op.json().id), owner, 'session', [start, end]);
    assertActor(await entryFor(ta, 'operator.updated', op.json().id), owner, 'api_key', [start, end]);
    // Readable with a key too, given audit:view.
    const viewKey = await newApiKey(ta, ['audit:view']);
    const viaKey = await entries(ta, '&action=role.created', viewKey.secret);
    assert.ok(viaKey.some((e) => e.target_id === role.json().id && e.via === 'api_key'));
  });

  test('GET /api/audit-log needs audit:view: 401 anonymous, 403 without it', async (t) => {
    const ta = await buildTestApp(t, engine);
    const anon = await call(ta.app, null, { method: 'GET', url: '/api/audit-log' });
    expectProblem(anon, 401, 'unauthorized');
    assert.match(String(anon.headers['www-authenticate']), /^Bearer/);

    const nobody = await newOperator(ta, ['leads:view', 'roles:view', 'operators:view']);
    expectProblem(await call(ta.app, nobody.token, { method: 'GET', url: '/api/audit-log' }), 403, 'forbidden');
    const auditor = await newOperator(ta, ['audit:view']);
    const ok = await call(ta.app, auditor.token, { method: 'GET', url: '/api/audit-log' });
    assert.equal(ok.statusCode, 200);
    assert.ok(ok.json().data.length > 0);

    const wrongKey = await newApiKey(ta, ['leads:view']);
    expectProblem(
      await call(ta.app, wrongKey.secret, { method: 'GET', url: '/api/audit-log' }),
      403,
      'insufficient_scope',
    );
    // A key with the scope whose operator's role has since lost it: refused.
    const auditorKey = await newApiKey(ta, ['audit:view'], { token: auditor.token });
    assert.equal((await call(ta.app, auditorKey.secret, { method: 'GET', url: '/api/audit-log' })).statusCode, 200);
    await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/roles/${auditor.roleId}`,
      payload: { permissions: ['leads:view'] },
    });
    expectProblem(await call(ta.app, auditorKey.secret, { method: 'GET', url: '/api/audit-log' }), 403, 'forbidden');
    expectProblem(await call(ta.app, auditor.token, { method: 'GET', url: '/api/audit-log' }), 403, 'forbidden');
  });

  test('newest first; filters by action and actor_id', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['roles:view', 'roles:edit']);
    for (let i = 0; i < 3; i++) {
      await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: '/api/roles',
        payload: { name: `owner ${i}`, permissions: [] },
      });
      await call(ta.app, op.token, {
        method: 'POST',
        url: '/api/roles',
        payload: { name: `op ${i}`, permissions: [] },
      });
    }
    const all = await entries(ta);
    assert.ok(all.length >= 10);
    for (let i = 1; i < all.length; i++) {
      assert.ok(all[i - 1].id > all[i].id, 'ids descend');
      assert.ok(all[i - 1].at >= all[i].at, 'times never go up');
    }
    assert.deepEqual(
      all.map((e) => e.id),
      await allIdsInDb(ta),
    );
    // The newest entry is the last thing done.
    assert.equal(all[0].action, 'role.created');
    assert.equal(all[0].actor_id, op.id);

    const created = await entries(ta, '&action=role.created');
    assert.equal(created.length, 7, "6 here + newOperator's role");
    assert.ok(created.every((e) => e.action === 'role.created'));
    assert.deepEqual(
      created.map((e) => e.id),
      await allIdsInDb(ta, 'role.created'),
    );

    const byOp = await entries(ta, `&actor_id=${op.id}`);
    assert.ok(byOp.every((e) => e.actor_id === op.id));
    assert.deepEqual(byOp.map((e) => e.action).sort(), ['auth.login', 'role.created', 'role.created', 'role.created']);
    const byOpCreated = await entries(ta, `&actor_id=${op.id}&action=role.created`);
    assert.equal(byOpCreated.length, 3);
    assert.deepEqual(await entries(ta, '&action=no.such.action'), []);
    assert.deepEqual(await entries(ta, '&actor_id=nobody'), []);
  });

  test('keyset paging returns every entry exactly once, even while new events arrive', async (t) => {
    const ta = await buildTestApp(t, engine);
    let n = 0;
    const newEvent = async () => {
      const res = await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: '/api/roles',
        payload: { name: `r${++n}`, permissions: [] },
      });
      assert.equal(res.statusCode, 201);
    };
    for (let i = 0; i < 9; i++) await newEvent();

    // Quiet log: pages of 2 until next_cursor is null; the whole log, in order.
    const snapshot = await allIdsInDb(ta);
    assert.equal(snapshot.length, 10); // the owner's login + 9 roles
    const quiet = await walk(ta, '', 2);
    assert.deepEqual(quiet.ids, snapshot);
    assert.deepEqual(quiet.sizes, [2, 2, 2, 2, 2]);

    // Busy log: a new event lands after every page fetched. The walk still sees exactly the
    // entries that existed when it started, each once; the new ones are only at the head.
    const before = await allIdsInDb(ta);
    const busy = await walk(ta, '', 2, newEvent);
    assert.equal(new Set(busy.ids).size, busy.ids.length, 'no repeats');
    assert.deepEqual(busy.ids, before, 'no gaps, no repeats, no newcomers mid-walk');
    const after = await allIdsInDb(ta);
    assert.equal(after.length, before.length + busy.sizes.length);
    const newcomers = after.slice(0, busy.sizes.length);
    assert.ok(
      newcomers.every((id) => id > before[0]),
      'new events sort before (above) every older one',
    );
    assert.deepEqual(after.slice(busy.sizes.length), before);

    // Same with a filter, and an odd page size.
    const createdBefore = await allIdsInDb(ta, 'role.created');
    const filtered = await walk(ta, '&action=role.created', 3, newEvent);
    assert.deepEqual(filtered.ids, createdBefore);

    // A fresh walk afterwards sees everything, including what arrived meanwhile.
    const final = await walk(ta, '', 4);
    assert.deepEqual(final.ids, await allIdsInDb(ta));
  });

  test('a bad cursor or limit is 400 naming the parameter', async (t) => {
    const ta = await buildTestApp(t, engine);
    const get = (q: string) => call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/audit-log?${q}` });
    assert.deepEqual(fieldsOf(await get('cursor=garbage!!')), ['cursor']);
    assert.deepEqual(fieldsOf(await get('cursor=not-base64-json')), ['cursor']);
    assert.deepEqual(fieldsOf(await get(`cursor=${Buffer.from('{"x":1}').toString('base64url')}`)), ['cursor']);
    assert.deepEqual(fieldsOf(await get(`cursor=${Buffer.from('[1,2]').toString('base64url')}`)), ['cursor']);
    assert.deepEqual(fieldsOf(await get('cursor=')), ['cursor']);
    assert.deepEqual(fieldsOf(await get('limit=0')), ['limit']);
    assert.deepEqual(fieldsOf(await get('limit=501')), ['limit']);
    assert.deepEqual(fieldsOf(await get('limit=-1')), ['limit']);
    assert.deepEqual(fieldsOf(await get('limit=ten')), ['limit']);
    assert.deepEqual(fieldsOf(await get('since=yesterday')), ['since']);
    assert.equal((await get('limit=500')).statusCode, 200);
    assert.equal((await get('limit=1')).json().data.length, 1);
  });

  test('GET /api/audit-log/actions lists every action recorded, and needs audit:view', async (t) => {
    const ta = await buildTestApp(t, engine);
    const res = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/audit-log/actions?limit=500' });
    assert.equal(res.statusCode, 200, res.body);
    const actions: string[] = res.json().data;
    // Every entry written so far (setup, login) is one of them; audit() itself accepts no other (typed).
    const written = await ta.db.selectFrom('audit_log').select('action').distinct().execute();
    assert.ok(written.length > 0);
    for (const { action } of written) assert.ok(actions.includes(action), action);
    for (const a of [
      'auth.login_failed',
      'profile.2fa_enabled',
      'hosting.backup_created',
      'licence.installed',
      'lead.redelivered',
    ])
      assert.ok(actions.includes(a), a);
    assert.equal(new Set(actions).size, actions.length, 'no duplicates');
    assert.equal(res.json().next_cursor, null, 'one page of 500 holds them all');
    const first = (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/audit-log/actions?limit=10' })).json();
    const rest = (
      await call(ta.app, ta.ownerToken, {
        method: 'GET',
        url: `/api/audit-log/actions?limit=500&cursor=${first.next_cursor}`,
      })
    ).json();
    assert.deepEqual([...first.data, ...rest.data], actions, 'pages continue where the last one ended');
    for (const bad of ['bm9wZQ', Buffer.from('{"action":"no.such"}').toString('base64url')]) {
      expectProblem(
        await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/audit-log/actions?cursor=${bad}` }),
        400,
        'validation_failed',
      );
    }
    const other = await newOperator(ta, ['leads:view']);
    expectProblem(await call(ta.app, other.token, { method: 'GET', url: '/api/audit-log/actions' }), 403, 'forbidden');
  });
});
