import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { insertCampaign, insertLeads, insertTrafficProvider } from '../../../../test/fixtures.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newOperator,
  type Engine,
} from '../../../../test/helpers.js';
import {
  allErrors,
  get,
  goodRow,
  HEADER,
  importTarget,
  MAPPING,
  post,
  uploaded,
  workUntilNot,
} from '../../../../test/import-world.js';

// The dry run: every bad row named at its row, field and reason by intake's rules (country,
// phone for the country, email, required fields, IP, duplicates of existing leads and of earlier
// rows, across chunks), nothing written but the report; its body checks; the errors as a page and as CSV.

async function setup(t: TestContext, engine: Engine) {
  // Small chunks: the file's duplicates span chunks.
  const ta = await buildTestApp(t, engine, { env: { IMPORT_CHUNK_BYTES: '150' } });
  const target = await importTarget(ta);
  const [existing] = await insertLeads(ta.db, [
    { traffic_provider_id: target.providerId, campaign_id: target.campaignId, email: 'old@example.com' },
  ]);
  const rows = [
    goodRow(1),
    'Bo,Ray,bo@example.com,+49 151 23456789,XX,10.0.0.2,',
    'Cy,Ray,cy@example.com,12,DE,10.0.0.3,',
    'Di,Ray,not-an-email,+49 151 23456790,DE,10.0.0.4,',
    ',Ray,ed@example.com,+49 151 23456791,DE,10.0.0.5,',
    `Fay,Ray,ANN1@example.com,+49 151 23456792,DE,10.0.0.6,`,
    'Gus,Ray,old@example.com,+49 151 23456793,DE,10.0.0.7,',
    goodRow(8),
    'Hal,Ray,hal@example.com,+49 151 23456794,DE,999.1.1.1,',
  ];
  const csv = `${HEADER}\n${rows.join('\n')}\n`;
  const body = { mapping: MAPPING, traffic_provider_id: target.providerId, campaign_id: target.campaignId };
  return { ta, target, existing, csv, body };
}

forEachDatabase('CSV import dry run', (engine) => {
  test('every bad row is named at its row, field and reason; nothing is stored but the report', async (t) => {
    const { ta, existing, csv, body } = await setup(t, engine);
    const imp = await uploaded(ta, csv);
    const chunks = await ta.db.selectFrom('import_chunks').select('seq').execute();
    assert.ok(chunks.length >= 3, `several chunks: ${chunks.length}`);
    const res = await post(ta, `/api/imports/${imp.id}/dry-run`, body);
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json().state, 'validating');
    expectProblem(await post(ta, `/api/imports/${imp.id}/dry-run`, body), 409, 'conflict');
    const done = await workUntilNot(ta, imp.id, 'validating');
    assert.equal(done.state, 'validated');
    assert.deepEqual(
      { ...done.dry_run, finished_at: undefined },
      { rows: 9, good: 2, bad: 5, duplicates: 2, finished_at: undefined },
    );
    assert.deepEqual(done.progress, { rows_done: 9, rows: 9, percent: 100 });
    const errors = await allErrors(ta, imp.id);
    assert.deepEqual(
      errors.map((e) => [e.row, e.field, e.column, e.reason]),
      [
        [2, 'country', 'Country', 'is not an assigned ISO 3166-1 alpha-2 country code (e.g. DE, GB, US)'],
        [3, 'phone', 'Phone', 'is not a valid phone number for DE'],
        [4, 'email', 'E-Mail', 'is not a valid email address'],
        [5, 'first_name', 'First Name', 'is required: the cell is empty'],
        [6, 'email', 'E-Mail', 'duplicate of row 1 (same email)'],
        [7, 'email', 'E-Mail', `duplicate of lead ${existing} (same email)`],
        [9, 'ip', 'IP', 'is not an IPv4 or IPv6 address'],
      ],
    );
    assert.equal(errors[3].value, null, 'an empty cell');
    assert.equal(errors[2].value, 'not-an-email');
    const leads = await ta.db.selectFrom('leads').select('id').execute();
    assert.deepEqual(
      leads.map((l) => l.id),
      [existing],
      'a dry run stores no lead',
    );
    assert.deepEqual(await get(ta, `/api/imports/${imp.id}`), done);
    const audit = await ta.db.selectFrom('audit_log').selectAll().where('action', '=', 'import.dry_run').execute();
    assert.deepEqual(JSON.parse(audit[0].details).mapping, MAPPING);

    const csvRes = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/imports/${imp.id}/errors.csv` });
    assert.equal(csvRes.statusCode, 200);
    assert.match(csvRes.headers['content-type'] as string, /text\/csv/);
    const lines = csvRes.body.trim().split('\r\n');
    assert.equal(lines[0], 'row,field,column,reason,value');
    assert.equal(lines.length, 8);
    assert.equal(lines[5], '6,email,E-Mail,duplicate of row 1 (same email),ann1@example.com');

    // Without leads:contacts, contacts in the report are masked.
    const editor = await newOperator(ta, ['leads:view', 'leads:edit']);
    const masked = await allErrors(ta, imp.id, editor.token);
    assert.deepEqual(
      masked.map((e) => e.value),
      [null, '12', 'not-an-email', null, 'a***@example.com', 'o***@example.com', '999.1.1.1'].map((v, i) =>
        i === 0 ? 'XX' : v,
      ),
    );
  });

  test('rows a blocklist entry matches are bad rows naming the entry, in the dry run and the import', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { IMPORT_CHUNK_BYTES: '150' } });
    const target = await importTarget(ta);
    const other = await insertTrafficProvider(ta.db);
    const add = async (payload: object) => {
      const res = await call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/blocklists', payload });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };
    const domain = await add({ kind: 'email_domain', value: 'spam.test' });
    const block = await add({ kind: 'ip', value: '10.0.0.0/30' }); // 10.0.0.0–3: rows 1–3
    const sub = await add({ kind: 'sub_id', value: 's5', traffic_provider_id: target.providerId });
    await add({ kind: 'sub_id', value: 's6', traffic_provider_id: other }); // another provider's: not this import's
    await add({ kind: 'sub_id', value: 's7', expires_at: new Date(Date.now() + 60_000).toISOString() });
    await ta.db
      .updateTable('blocklist_entries')
      .set({ expires_at: '2000-01-01T00:00:00.000Z' })
      .where('value', '=', 's7')
      .execute();
    const rows = [4, 5, 6, 7, 8, 1].map((n) => goodRow(n));
    rows[4] = rows[4].replace('ann8@example.com', 'ann8@mx.SPAM.test');
    const csv = `${HEADER}\n${rows.join('\n')}\n`;
    const body = { mapping: MAPPING, traffic_provider_id: target.providerId, campaign_id: target.campaignId };
    const imp = await uploaded(ta, csv);
    await post(ta, `/api/imports/${imp.id}/dry-run`, body);
    const done = await workUntilNot(ta, imp.id, 'validating');
    assert.deepEqual([done.dry_run.good, done.dry_run.bad], [3, 3]);
    const errors = await allErrors(ta, imp.id);
    assert.deepEqual(
      errors.map((e) => [e.row, e.field, e.column, e.reason]),
      [
        [2, 'sub_id1', 'sub1', `blocklisted: sub id s5 (the provider's entry ${sub})`],
        [5, 'email', 'E-Mail', `blocklisted: email domain spam.test (global entry ${domain})`],
        [6, 'ip', 'IP', `blocklisted: ip 10.0.0.0/30 (global entry ${block})`],
      ],
    );
    const run = await post(ta, `/api/imports/${imp.id}/run`, { ...body, mode: 'store' });
    assert.equal(run.statusCode, 202, run.body);
    const imported = await workUntilNot(ta, imp.id, 'importing');
    assert.deepEqual(imported.counts, { good: 3, bad: 3, duplicates: 0, imported: 3 });
    // Imported leads are scored as intake scores them (the flags that need no database).
    const scores = await ta.db.selectFrom('leads').select(['flags', 'quality_score']).execute();
    assert.deepEqual(
      scores.map((l) => [l.flags, l.quality_score]),
      [
        [0, 100],
        [0, 100],
        [0, 100],
      ],
    );
    const emails = await ta.db.selectFrom('leads').select('email').orderBy('email').execute();
    assert.deepEqual(
      emails.map((l) => l.email),
      ['ann4@example.com', 'ann6@example.com', 'ann7@example.com'],
    );
  });

  test('a second dry run starts afresh; a campaign limited to some countries refuses the others', async (t) => {
    const { ta, target, csv, body } = await setup(t, engine);
    const limited = await insertCampaign(ta.db, target.providerId, null);
    await ta.db.updateTable('campaigns').set({ countries: '["AT"]' }).where('id', '=', limited).execute();
    const imp = await uploaded(ta, csv);
    await post(ta, `/api/imports/${imp.id}/dry-run`, body);
    await workUntilNot(ta, imp.id, 'validating');
    const again = await post(ta, `/api/imports/${imp.id}/dry-run`, { ...body, campaign_id: limited });
    assert.equal(again.statusCode, 202, again.body);
    const done = await workUntilNot(ta, imp.id, 'validating');
    assert.deepEqual([done.dry_run.good, done.dry_run.bad, done.dry_run.duplicates], [0, 9, 0]);
    const errors = await allErrors(ta, imp.id);
    assert.deepEqual(
      errors.filter((e) => e.row === 1).map((e) => [e.field, e.reason]),
      [['country', 'campaign does not accept DE leads']],
    );
  });

  test('a bad body: 400 naming each field; nothing started', async (t) => {
    const { ta, target, csv, body } = await setup(t, engine);
    const other = await insertTrafficProvider(ta.db);
    const otherCampaign = await insertCampaign(ta.db, other, null);
    const archived = await insertCampaign(ta.db, target.providerId, null);
    await ta.db
      .updateTable('campaigns')
      .set({ archived_at: new Date().toISOString() })
      .where('id', '=', archived)
      .execute();
    const imp = await uploaded(ta, csv);
    const fields = async (over: object) =>
      expectProblem(
        await post(ta, `/api/imports/${imp.id}/dry-run`, { ...body, ...over }),
        400,
        'validation_failed',
      ).errors!.map((e) => e.field);
    const { ip: _ip, ...noIp } = MAPPING;
    assert.deepEqual(await fields({ mapping: { ...noIp, nickname: 'sub1', email: 'Mail' } }), [
      'mapping.email',
      'mapping.nickname',
      'mapping.ip',
    ]);
    assert.deepEqual(await fields({ traffic_provider_id: 'nope' }), ['traffic_provider_id']);
    assert.deepEqual(await fields({ campaign_id: otherCampaign }), ['campaign_id']);
    assert.deepEqual(await fields({ campaign_id: archived }), ['campaign_id']);
    assert.deepEqual(await fields({ mapping: 'x' }), ['mapping']);
    assert.equal((await get(ta, `/api/imports/${imp.id}`)).state, 'uploaded');
    expectProblem(await post(ta, `/api/imports/nope/dry-run`, body), 404, 'not_found');
  });
});
