import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nowIso } from '../../db/ids.js';
import { insertAttempt, insertLeads, insertPartner, insertTrafficProvider } from '../../../../test/fixtures.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
} from '../../../../test/helpers.js';
import { ALL_PERMISSIONS } from '../../auth/permissions.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { forgetShapes } from '../quality/blocklist-shapes.js';
import { protectBlocklistKeys } from '../quality/match-secret.js';
import { purgeOldContactViews } from './service.js';
import { goodRow, HEADER, uploaded } from '../../../../test/import-world.js';
import { tracesOf } from '../../../../test/traces.js';

const EMAIL = 'zebulon.erase@example.test';
const PHONE = '+4915123987654';
const PHONE_DIGITS = PHONE.slice(1);
const FIRST = 'Zebulonius';
const LAST = 'Quibbleworthy';

forEachDatabase('privacy', (engine) => {
  test('an erasure leaves no trace of the email and the phone; other leads are untouched', async (t) => {
    const ta = await buildTestApp(t, engine);
    const provider = await insertTrafficProvider(ta.db);
    const partner = await insertPartner(ta.db);
    const [a, b, other] = await insertLeads(ta.db, [
      { traffic_provider_id: provider, email: EMAIL, phone: PHONE, first_name: FIRST, last_name: LAST },
      // The same phone, another email: erased too (by the phone), and its email with it.
      { traffic_provider_id: provider, email: 'second.mailbox@example.test', phone: PHONE },
      { traffic_provider_id: provider, email: 'keep.me@example.test', phone: '+4915111122233' },
    ]);
    // A partner's request echoed in its answer, and its reason.
    await insertAttempt(ta.db, {
      lead_id: a,
      partner_id: partner,
      attempt_no: 1,
      outcome: 'rejected',
      reason: `duplicate: ${EMAIL} already registered`,
      response_excerpt: JSON.stringify({ error: 'exists', lead: { email: EMAIL, phone: PHONE, name: FIRST } }),
    });
    await insertAttempt(ta.db, {
      lead_id: b,
      partner_id: partner,
      attempt_no: 1,
      response_excerpt: `phone=%2B${PHONE_DIGITS}&email=second.mailbox%40example.test&tel=+49 151 2398 7654&e="zebulon.erase\\u0040example.test"`,
    });
    await insertAttempt(ta.db, { lead_id: other, partner_id: partner, attempt_no: 1, reason: 'keep.me@example.test' });
    // Another lead's attempt quoting the contact (a partner naming the earlier registration).
    await insertAttempt(ta.db, {
      lead_id: other,
      partner_id: partner,
      attempt_no: 2,
      outcome: 'rejected',
      reason: `same person as ${EMAIL}`,
    });
    // A CSV import holding the contact: its stored row, a bad-row record, a duplicate key.
    const imp = await uploaded(ta, `${HEADER}\nZeb,Quib,${EMAIL},${PHONE},DE,10.0.0.1,s1\n${goodRow(1)}\n`);
    await ta.db
      .insertInto('import_errors')
      .values({ import_id: imp.id, row: 1, field: 'phone', column_name: 'Phone', reason: 'bad', value: PHONE })
      .execute();
    await ta.db
      .insertInto('import_keys')
      .values({ import_id: imp.id, key: `email:${EMAIL}`, row: 1 })
      .execute();
    await ta.db
      .insertInto('events')
      .values({
        type: 'lead.received',
        occurred_at: nowIso(),
        lead_id: a,
        partner_id: null,
        traffic_provider_id: provider,
        campaign_id: null,
        data: JSON.stringify({ lead: { email: EMAIL, phone: PHONE, first_name: FIRST, last_name: LAST } }),
        dedupe_key: null,
      })
      .execute();
    await ta.db
      .insertInto('lead_status_history')
      .values({
        lead_id: a,
        at: nowIso(),
        source: 'pull',
        sale_status: `call ${PHONE}`,
        previous_sale_status: null,
        ftd_at: null,
      })
      .execute();
    // An export searched by that email (its filters go into the audit log), a blocklist entry of it
    // (and its audit record), a failed login with it.
    const exp = await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: `/api/leads/export?q=${encodeURIComponent(EMAIL)}`,
    });
    assert.equal(exp.statusCode, 200, exp.body);
    const block = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/blocklists',
      payload: { kind: 'phone', value: PHONE },
    });
    assert.equal(block.statusCode, 201, block.body);
    const login = await call(ta.app, null, {
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: EMAIL, password: 'nope-nope-nope' },
    });
    assert.equal(login.statusCode, 401);
    const viewed = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/leads/${a}` });
    assert.equal(viewed.json().email, EMAIL);

    const needles = [EMAIL, PHONE, PHONE_DIGITS, FIRST, LAST, 'second.mailbox@example.test', 'second.mailbox%40'];
    assert.ok((await tracesOf(ta, [EMAIL])).length > 0, 'the test plants the email where it is searched');

    const res = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/privacy/erasures',
      payload: { email: ` ${EMAIL.toUpperCase()} `, phone: '+49 151 23987654', note: `request from ${EMAIL}` },
    });
    assert.equal(res.statusCode, 201, res.body);
    const receipt = res.json();
    assert.deepEqual(new Set(receipt.lead_ids), new Set([a, b]));
    assert.equal(receipt.subject, 'z***@example.test, +49*********54');
    assert.equal(receipt.note, 'request from [erased]');
    assert.equal(receipt.counts.leads, 2);
    assert.equal(receipt.counts.lead_attempts, 3);
    assert.equal(receipt.counts.import_rows, 1);
    assert.equal(receipt.counts.import_errors, 1);
    assert.equal(receipt.counts.import_keys, 1);
    assert.equal(receipt.counts.lead_status_history, 1);
    assert.equal(receipt.counts.events, 1);
    assert.equal(receipt.counts.blocklist_entries, 1 + 0); // the entry deleted (its note had nothing)
    assert.equal(receipt.counts.login_failures, 1);
    assert.equal(receipt.counts.audit_log, 2, JSON.stringify(receipt.counts)); // the export's filters, the failed login's email
    assert.equal(receipt.wal_truncated, engine === 'sqlite' ? true : null);

    assert.deepEqual(await tracesOf(ta, needles), []);

    const erased = await ta.db.selectFrom('leads').selectAll().where('id', '=', a).executeTakeFirstOrThrow();
    assert.equal(erased.email, '');
    assert.equal(erased.first_name, '[erased]');
    assert.ok(erased.erased_at);
    const detail = (await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/leads/${a}` })).json();
    assert.equal(detail.first_name, '[erased]');
    assert.equal(detail.erased_at, erased.erased_at);
    const kept = await ta.db.selectFrom('leads').selectAll().where('id', '=', other).executeTakeFirstOrThrow();
    assert.equal(kept.email, 'keep.me@example.test');
    assert.equal(kept.phone, '+4915111122233');
    assert.equal(kept.first_name, 'Ada');
    assert.equal(kept.erased_at, null);
    const keptAttempts = await ta.db
      .selectFrom('lead_attempts')
      .select('reason')
      .where('lead_id', '=', other)
      .orderBy('attempt_no')
      .execute();
    assert.deepEqual(
      keptAttempts.map((r) => r.reason),
      ['keep.me@example.test', 'same person as [erased]'],
    );
    // Spellings no byte search looks for (grouped digits, an escaped @) are masked.
    const excerpt = await ta.db
      .selectFrom('lead_attempts')
      .select('response_excerpt')
      .where('lead_id', '=', b)
      .executeTakeFirstOrThrow();
    assert.doesNotMatch(excerpt.response_excerpt!, /zebulon|2398|second\.mailbox/, excerpt.response_excerpt!);
    const chunk = await ta.db.selectFrom('import_chunks').select('data').executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(chunk.data)[0], ['', '', '', '', '', '', '']);
    assert.equal(JSON.parse(chunk.data)[1][0], 'Ann1', 'the other row is kept');

    // The receipt is listed; the erasure is audited with the subject masked.
    const list = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/privacy/erasures' });
    assert.equal(list.statusCode, 200);
    assert.equal(list.json().data[0].id, receipt.id);
    const audited = await ta.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'privacy.erased')
      .executeTakeFirstOrThrow();
    assert.match(audited.details, /z\*\*\*@example\.test/);
  });

  test('erasure: admins from a session only; input named field by field', async (t) => {
    const ta = await buildTestApp(t, engine);
    const url = '/api/privacy/erasures';
    const key = await newApiKey(ta, [...ALL_PERMISSIONS]);
    expectProblem(
      await call(ta.app, key.secret, { method: 'POST', url, payload: { email: EMAIL } }),
      403,
      'session_required',
    );
    expectProblem(await call(ta.app, key.secret, { method: 'GET', url }), 403, 'session_required');
    const op = await newOperator(ta, [...ALL_PERMISSIONS]);
    expectProblem(await call(ta.app, op.token, { method: 'POST', url, payload: { email: EMAIL } }), 403, 'forbidden');
    expectProblem(await call(ta.app, op.token, { method: 'GET', url: '/api/privacy/contact-views' }), 403, 'forbidden');
    expectProblem(await call(ta.app, null, { method: 'POST', url, payload: { email: EMAIL } }), 401, 'unauthorized');
    const none = await call(ta.app, ta.ownerToken, { method: 'POST', url, payload: {} });
    expectProblem(none, 400, 'validation_failed');
    assert.equal(none.json().errors[0].field, 'email');
    const bad = await call(ta.app, ta.ownerToken, { method: 'POST', url, payload: { email: 'nope', phone: '12' } });
    expectProblem(bad, 400, 'validation_failed');
    assert.deepEqual(
      bad.json().errors.map((e: { field: string }) => e.field),
      ['email', 'phone'],
    );
    // Nobody carries it: a receipt with nothing erased.
    const empty = await call(ta.app, ta.ownerToken, { method: 'POST', url, payload: { phone: '+4915123987654' } });
    assert.equal(empty.statusCode, 201, empty.body);
    assert.equal(empty.json().counts.leads, 0);
  });

  test('the contact-view log: who read contacts, how, from where; masked export filters; paged', async (t) => {
    const ta = await buildTestApp(t, engine);
    const provider = await insertTrafficProvider(ta.db);
    const [lead] = await insertLeads(ta.db, [{ traffic_provider_id: provider, email: EMAIL }]);
    const reader = await newOperator(ta, ['leads:view', 'leads:contacts']);
    const masked = await newOperator(ta, ['leads:view']);
    const key = await newApiKey(ta, ['leads:view', 'leads:contacts'], { token: reader.token });
    assert.equal((await call(ta.app, reader.token, { method: 'GET', url: `/api/leads/${lead}` })).statusCode, 200);
    assert.equal((await call(ta.app, key.secret, { method: 'GET', url: `/api/leads/${lead}` })).statusCode, 200);
    // Without leads:contacts nothing is shown unmasked: nothing is recorded.
    assert.equal((await call(ta.app, masked.token, { method: 'GET', url: `/api/leads/${lead}` })).statusCode, 200);
    const exp = await call(ta.app, reader.token, {
      method: 'GET',
      url: `/api/leads/export?q=${encodeURIComponent(EMAIL)}`,
    });
    assert.equal(exp.statusCode, 200);

    const all = await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: `/api/privacy/contact-views?operator_id=${reader.id}`,
    });
    assert.equal(all.statusCode, 200, all.body);
    const rows = all.json().data;
    assert.equal(rows.length, 3);
    assert.deepEqual(
      rows.map((r: { kind: string; via: string }) => `${r.kind}/${r.via}`),
      ['export/session', 'lead/api_key', 'lead/session'],
    );
    assert.equal(rows[0].export_filter.q, 'z***@example.test');
    assert.equal(rows[1].lead_id, lead);
    assert.equal(rows[1].operator_email, reader.email);
    assert.ok(rows[1].ip);
    const none = await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: `/api/privacy/contact-views?operator_id=${masked.id}`,
    });
    assert.deepEqual(none.json().data, []);

    const byLead = await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: `/api/privacy/contact-views?lead_id=${lead}&limit=1`,
    });
    assert.equal(byLead.json().data.length, 1);
    const next = await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: `/api/privacy/contact-views?lead_id=${lead}&limit=1&cursor=${byLead.json().next_cursor}`,
    });
    assert.equal(next.json().data.length, 1);
    assert.equal(next.json().next_cursor, null);
    assert.notEqual(next.json().data[0].id, byLead.json().data[0].id);
    const key2 = await newApiKey(ta, [...ALL_PERMISSIONS]);
    expectProblem(
      await call(ta.app, key2.secret, { method: 'GET', url: '/api/privacy/contact-views' }),
      403,
      'session_required',
    );
    // Kept 400 days: older rows go with the hourly purge.
    const old = new Date(Date.now() - 401 * 86_400_000).toISOString();
    await ta.db.updateTable('contact_views').set({ at: old }).where('kind', '=', 'export').execute();
    assert.equal(await purgeOldContactViews(ta.db), 1);
    const left = await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: `/api/privacy/contact-views?operator_id=${reader.id}`,
    });
    assert.equal(left.json().data.length, 2);
    const badCursor = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/privacy/contact-views?cursor=zz' });
    expectProblem(badCursor, 400, 'validation_failed');
  });

  test('blocklist: true lists the contacts by their digest only; a lead with that email or phone is then rejected', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const first = await postLead(ta, w.token, sampleLead({ email: EMAIL, phone: PHONE }));
    assert.equal(first.statusCode, 201, first.body);
    assert.equal(first.json().status, 'delivered');
    const res = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/privacy/erasures',
      payload: { email: EMAIL, phone: PHONE, blocklist: true },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().counts.leads, 1);
    assert.equal(res.json().counts.blocklisted, 2);
    assert.deepEqual(await tracesOf(ta, [EMAIL, PHONE, PHONE_DIGITS]), []);

    const list = (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/blocklists' })).json().data;
    assert.deepEqual(list.map((e: { kind: string; value: string }) => `${e.kind}:${e.value}`).sort(), [
      'email:erased subject',
      'phone:erased subject',
    ]);
    // Looked up by the contact, the entry is found through its digest.
    const found = await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: `/api/blocklists?value=${encodeURIComponent(EMAIL)}`,
    });
    assert.equal(found.json().data.length, 1);
    const byEmail = await postLead(ta, w.token, sampleLead({ email: EMAIL.toUpperCase() }));
    assert.equal(byEmail.json().status, 'rejected', byEmail.body);
    const byPhone = await postLead(ta, w.token, sampleLead({ phone: PHONE }));
    assert.equal(byPhone.json().status, 'rejected', byPhone.body);
    assert.equal((await postLead(ta, w.token, sampleLead())).json().status, 'delivered');
  });

  test('email and phone entries stored with a clear key (an earlier release) get their digest at start-up', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    await ta.db
      .insertInto('blocklist_entries')
      .values({
        id: 'clear-entry',
        kind: 'email',
        value: EMAIL,
        match_key: `email:${EMAIL}`,
        traffic_provider_id: null,
        expires_at: null,
        note: null,
        created_by: null,
        created_at: nowIso(),
      })
      .execute();
    await ta.db.insertInto('blocklist_shapes').values({ shape: 'email', entries: 1 }).execute();
    assert.equal(await protectBlocklistKeys(ta.db), 1);
    assert.equal(await protectBlocklistKeys(ta.db), 0, 'once');
    forgetShapes(ta.db);
    const row = await ta.db.selectFrom('blocklist_entries').select('match_key').executeTakeFirstOrThrow();
    assert.match(row.match_key, /^email#[\w-]{43}$/);
    assert.equal((await postLead(ta, w.token, sampleLead({ email: EMAIL }))).json().status, 'rejected');
  });
});
