// GET /api/leads/export: the CSV itself (header, quoting, formula guard, masking), the same
// filters as search, and streaming in keyset chunks as the reader takes them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildTestApp,
  call,
  forEachDatabase,
  newApiKey,
  newOperator,
  parseCsv,
  type TestApp,
} from '../../../../test/helpers.js';
import { insertLeads, insertLeadWorld, leadRow, type LeadInput } from '../../../../test/fixtures.js';
import { nowIso } from '../../db/ids.js';
import { exporters } from './exporter.js';
import { leadFilter } from './search.js';
import { UNSCOPED } from '../../db/scope.js';
import type { Principal } from '../../types.js';

const at = (minutes: number) => new Date(Date.UTC(2026, 9, 1, 10) + minutes * 60_000).toISOString();

const HEADER = [
  'id',
  'created_at',
  'first_name',
  'last_name',
  'email',
  'phone',
  'country',
  'ip',
  'language',
  'funnel',
  'sub_id1',
  'sub_id2',
  'sub_id3',
  'sub_id4',
  'sub_id5',
  'traffic_provider_id',
  'traffic_provider_name',
  'campaign_id',
  'campaign_name',
  'flow_id',
  'flow_name',
  'partner_id',
  'partner_name',
  'status',
  'reason',
  'partner_lead_id',
  'sale_status',
  'autologin_url',
  'delivered_at',
  'ftd_at',
  'is_ftd',
  'status_updated_at',
  'payout',
  'revenue',
  'flags',
  'quality_score',
];

async function csv(ta: TestApp, qs = '', token = ta.ownerToken) {
  const res = await call(ta.app, token, { method: 'GET', url: `/api/leads/export${qs ? `?${qs}` : ''}` });
  assert.equal(res.statusCode, 200, res.body);
  const rows = parseCsv(res.body);
  assert.deepEqual(rows[0], HEADER);
  const records = rows.slice(1).map((r) => {
    assert.equal(r.length, HEADER.length);
    return Object.fromEntries(HEADER.map((h, i) => [h, r[i]]));
  });
  return { res, records };
}

forEachDatabase('Leads export (CSV)', (engine) => {
  test('a CSV attachment: header row, quoting, formula guard, masking without leads:contacts', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    const tricky: LeadInput = {
      traffic_provider_id: w.providerA,
      partner_id: w.partnerA,
      campaign_id: w.campaignA,
      created_at: at(1),
      first_name: 'Smith, "Jr"',
      last_name: 'two\r\nlines',
      email: 'smith@example.com',
      phone: '+4915123456767',
      funnel: '=HYPERLINK("http://evil.example","x")',
      language: '@SUM(A1)',
      sub_id1: '-2+3',
      sub_id2: '+1 (800) 555-0199',
      sub_id3: '\tcmd',
      sub_id4: 'a=b',
      sub_id5: '+cmd|calc',
      status: 'delivered',
      delivered_at: at(2),
      ftd_at: at(3),
      autologin_url: 'https://b.example/in?a=1&b=2',
      cost_cents: 1250,
      revenue_cents: 5,
    };
    const [trickyId, plainId] = await insertLeads(ta.db, [
      tricky,
      {
        traffic_provider_id: w.providerB,
        created_at: at(0),
        first_name: 'Plain',
        last_name: 'Lead',
        email: 'plain@example.com',
        phone: '+33612345678',
      },
    ]);
    const { res, records } = await csv(ta);
    assert.match(String(res.headers['content-type']), /^text\/csv; charset=utf-8/);
    assert.match(
      String(res.headers['content-disposition']),
      /^attachment; filename="leads-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z\.csv"$/,
    );
    assert.deepEqual(
      records.map((r) => r.id),
      [trickyId, plainId],
    );
    const [a, b] = records;
    assert.deepEqual(
      [a.first_name, a.last_name, a.funnel, a.language, a.sub_id1, a.sub_id2, a.sub_id3, a.sub_id4, a.sub_id5],
      [
        'Smith, "Jr"',
        'two\r\nlines',
        `'=HYPERLINK("http://evil.example","x")`,
        "'@SUM(A1)",
        "'-2+3",
        '+1 (800) 555-0199',
        "'\tcmd",
        'a=b',
        "'+cmd|calc",
      ],
    );
    // A phone runs nothing in a spreadsheet: written as it is, no apostrophe to break a CRM import.
    assert.deepEqual(
      [a.email, a.phone, a.autologin_url],
      ['smith@example.com', '+4915123456767', 'https://b.example/in?a=1&b=2'],
    );
    assert.deepEqual(
      [a.traffic_provider_name, a.partner_name, a.campaign_name, a.flow_name],
      ['Provider A', 'Partner A', 'Campaign A', ''],
    );
    assert.deepEqual(
      [a.status, a.is_ftd, a.payout, a.revenue, a.ftd_at, a.delivered_at],
      ['delivered', 'true', '12.5', '0.05', at(3), at(2)],
    );
    assert.deepEqual(
      [b.partner_id, b.sale_status, b.autologin_url, b.is_ftd, b.payout, b.email, b.phone],
      ['', '', '', 'false', '0', 'plain@example.com', '+33612345678'],
    );
    // Quoting is where it must be, and only there.
    assert.ok(res.body.includes('"Smith, ""Jr"""') && res.body.includes('"two\r\nlines"'));
    assert.ok(res.body.startsWith('id,created_at,first_name,'));

    // Without leads:contacts (a role without it, or a key without the scope) the file masks them too.
    const viewer = await newOperator(ta, ['leads:view']);
    const key = await newApiKey(ta, ['leads:view']);
    for (const token of [viewer.token, key.secret]) {
      const masked = (await csv(ta, '', token)).records;
      assert.deepEqual(
        masked.map((r) => [r.email, r.phone]),
        [
          ['s***@example.com', '+49*********67'],
          ['p***@example.com', '+33*******78'],
        ],
      );
      const raw = (await call(ta.app, token, { method: 'GET', url: '/api/leads/export' })).body;
      assert.ok(!raw.includes('smith@example.com') && !raw.includes('4915123456767'));
    }
    const fullKey = await newApiKey(ta, ['leads:view', 'leads:contacts']);
    assert.equal(
      (await csv(ta, 'status=delivered,new&country=de', fullKey.secret)).records[0].email,
      'smith@example.com',
    );
    // Every export is in the audit log: who, which filters, whether contacts were in it.
    const exports = await ta.db
      .selectFrom('audit_log')
      .select(['actor_id', 'via', 'details'])
      .where('action', '=', 'lead.exported')
      .orderBy('id')
      .execute();
    assert.deepEqual(
      exports.map((e) => [e.actor_id, e.via, JSON.parse(e.details).contacts]),
      [
        [ta.ownerId, 'session', true],
        [viewer.id, 'session', false],
        [viewer.id, 'session', false],
        [ta.ownerId, 'api_key', false],
        [ta.ownerId, 'api_key', false],
        [ta.ownerId, 'api_key', true],
      ],
    );
    assert.deepEqual(JSON.parse(exports[5].details).filters, {
      date_type: 'registration',
      order: 'desc',
      status: ['delivered,new'],
      country: ['de'],
    });
  });

  test('the export takes the search filters and selects the same leads in the same order', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    await insertLeads(
      ta.db,
      Array.from({ length: 40 }, (_, i) => ({
        traffic_provider_id: i % 2 ? w.providerA : w.providerB,
        partner_id: i % 3 ? w.partnerA : null,
        status: (['new', 'delivered', 'rejected'] as const)[i % 3],
        country: i % 4 ? 'DE' : 'FR',
        created_at: new Date(Date.UTC(2026, 10, 20, 20) + i * 20 * 60_000).toISOString(), // 20 Nov 20:00Z onwards, every 20 minutes
        delivered_at: i % 3 === 1 ? at(i) : null,
        ftd_at: i % 5 === 0 ? at(i) : null,
        sub_id2: i % 2 ? 'x' : 'y',
      })),
    );
    const filters = [
      '',
      'status=delivered',
      'status=new,rejected&country=FR',
      `partner_id=${w.partnerA}&is_ftd=false`,
      'date_from=2026-11-21&date_to=2026-11-21&timezone=Europe/Berlin',
      'date_from=2026-11-21&timezone=Asia/Tokyo&sub_id2=x',
      'date_type=delivered',
      `date_type=ftd&traffic_provider_id=${w.providerB}`,
      'q=nobody',
      'order=asc&status=rejected',
    ];
    const counts = new Set<number>();
    for (const qs of filters) {
      const search = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/leads/search?limit=500&${qs}` });
      const expected = search.json().data.map((r: { id: string }) => r.id);
      assert.deepEqual(
        (await csv(ta, qs)).records.map((r) => r.id),
        expected,
        qs,
      );
      counts.add(expected.length);
    }
    // A selection: the leads picked by id, whatever page they were on.
    const all = (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/leads/search?limit=500' }))
      .json()
      .data.map((r: { id: string }) => r.id);
    const picked = [all[1], all[17], all[39]];
    assert.deepEqual(
      (await csv(ta, `id=${picked.join(',')}`)).records.map((r) => r.id),
      picked,
    );
    assert.ok(counts.size >= 6, 'the filters select different sets');
    assert.ok(counts.has(0) && counts.has(40));
  });

  test('thousands of rows stream in keyset chunks, each lead once, read only as the client takes them', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    // 2,600 leads; 40 share one registration time across the 1,000-row chunk boundary.
    const rows = Array.from({ length: 2600 }, (_, i) =>
      leadRow({
        traffic_provider_id: w.providerA,
        created_at: i >= 1580 && i < 1620 ? at(1600) : at(i),
        first_name: `N${i}`,
      }),
    );
    for (let i = 0; i < rows.length; i += 200)
      await ta.db
        .insertInto('leads')
        .values(rows.slice(i, i + 200))
        .execute();
    const expected = [...rows]
      .sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : -1))
      .map((r) => r.id);

    const { records } = await csv(ta);
    assert.equal(records.length, 2600);
    assert.deepEqual(
      records.map((r) => r.id),
      expected,
    );

    // Straight from the exporter with small chunks: one page of 100 at a time, asked for only when
    // the reader has taken the rows before it; leads arriving meanwhile do not repeat or shift rows.
    const principal = {
      operator: { timezone: 'UTC' },
      permissions: new Set(['leads:view']),
      scope: UNSCOPED,
    } as unknown as Principal;
    const filter = leadFilter({ date_type: 'registration' }, principal);
    const exporter = exporters.get(ta.db)!;
    const stream = await exporter.open(filter, false, 100)!;
    const progress = [...exporter.jobs.values()].at(-1)!;
    assert.ok(progress.rows >= 100, 'the first page is read before the answer starts');
    const seen: string[] = [];
    const it = stream[Symbol.asyncIterator]();
    let text = ((await it.next()).value as Buffer).toString('utf8');
    // The reader stops for a second: the stream reads ahead a bounded amount, not the whole table
    // (without back-pressure all 26 pages are in by then).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.ok(progress.rows <= 800, `read ahead by a few pages (64 KB) at most, not all 26 (${progress.rows} rows)`);
    await insertLeads(ta.db, [
      { traffic_provider_id: w.providerA, created_at: nowIso() },
      { traffic_provider_id: w.providerA, created_at: at(1600) },
    ]);
    for (let r = await it.next(); !r.done; r = await it.next()) text += (r.value as Buffer).toString('utf8');
    for (const r of parseCsv(text).slice(1)) seen.push(r[0]);
    assert.ok(
      progress.rows >= 2600 && progress.rows <= 2601,
      `${progress.rows} rows: the 2,600 and at most the lead inserted behind the reader`,
    );
    assert.equal(seen.length, progress.rows);
    const original = new Set(expected);
    assert.equal(new Set(seen).size, seen.length, 'no lead twice');
    assert.deepEqual(
      seen.filter((id) => original.has(id)),
      expected,
    );
    assert.ok(
      parseCsv(text)
        .slice(1)
        .every((r) => r[4].includes('***')),
      'masked: contacts=false',
    );
  });
});
