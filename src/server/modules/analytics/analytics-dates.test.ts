// Analytics and time: day boundaries in time zones (DST, :30/:45 offsets, skipped midnights),
// date_type=ftd, changes to leads after the fact, ranges that cut hours, and the defaults.
// Every expected number comes from the rows the test inserted (test/fixtures.ts:
// expectedAnalytics), never from the code under test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  analyticsDataset,
  expectedAnalytics,
  insertAnalyticsWorld,
  insertLeads,
  localDate,
  type LeadInput,
  assertAnalyticsGroups,
} from '../../../../test/fixtures.js';
import { buildTestApp, call, getJson, forEachDatabase } from '../../../../test/helpers.js';

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const MARCH_BERLIN = 'date_from=2026-03-01&date_to=2026-03-31&timezone=Europe/Berlin';
const MARCH_FROM = '2026-02-28T23:00:00.000Z'; // midnight CET
const MARCH_TO = '2026-03-31T22:00:00.000Z'; // midnight CEST after the 29th

forEachDatabase('Analytics: days, FTD dates and changes', (engine) => {
  test('days follow the time zone: late UTC evening is the next day in Berlin, DST days have 23 and 25 hours, :30 and :45 offsets', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertAnalyticsWorld(ta.db);
    const lead = (at: string, status: LeadInput['status'] = 'delivered'): LeadInput => ({
      traffic_provider_id: w.t1,
      created_at: at,
      status,
    });
    await insertLeads(ta.db, [
      lead('2026-03-10T22:59:59.999Z'), // Berlin 23:59:59.999 on the 10th
      lead('2026-03-10T23:30:00.000Z'), // Berlin 00:30 on the 11th
      lead('2026-03-28T23:00:00.000Z'), // Berlin 00:00 CET on the 29th (the 23-hour day)
      lead('2026-03-29T01:30:00.000Z'), // Berlin 03:30 CEST, just after the jump
      lead('2026-03-29T21:59:00.000Z'), // Berlin 23:59 CEST on the 29th
      lead('2026-03-29T22:00:00.000Z'), // Berlin 00:00 on the 30th
      lead('2026-10-24T22:00:00.000Z'), // Berlin 00:00 CEST on 25 October (the 25-hour day)
      lead('2026-10-25T00:30:00.000Z'), // Berlin 02:30 CEST
      lead('2026-10-25T01:30:00.000Z'), // Berlin 02:30 CET, the repeated hour
      lead('2026-10-25T22:59:00.000Z'), // Berlin 23:59 CET on the 25th
      lead('2026-10-25T23:00:00.000Z'), // Berlin 00:00 on the 26th
    ]);
    const days = async (from: string, to: string, tz: string) => {
      const body = await getJson(
        ta,
        `/api/analytics/report?group_by=day&date_from=${from}&date_to=${to}&timezone=${encodeURIComponent(tz)}`,
      );
      return Object.fromEntries(body.rows.filter((r: any) => r.leads).map((r: any) => [r.key, r.leads]));
    };
    assert.deepEqual(await days('2026-03-10', '2026-03-11', 'Europe/Berlin'), { '2026-03-10': 1, '2026-03-11': 1 });
    assert.deepEqual(await days('2026-03-10', '2026-03-11', 'UTC'), { '2026-03-10': 2 });
    assert.deepEqual(await days('2026-03-28', '2026-03-30', 'Europe/Berlin'), { '2026-03-29': 3, '2026-03-30': 1 });
    assert.deepEqual(await days('2026-10-24', '2026-10-26', 'Europe/Berlin'), { '2026-10-25': 4, '2026-10-26': 1 });
    // The range of one DST day is 23 (or 25) hours long.
    const spring = await getJson(
      ta,
      '/api/analytics/summary?date_from=2026-03-29&date_to=2026-03-29&timezone=Europe/Berlin',
    );
    assert.equal(Date.parse(spring.to) - Date.parse(spring.from), 23 * HOUR);
    assert.equal(spring.totals.leads, 3);
    const autumn = await getJson(
      ta,
      '/api/analytics/summary?date_from=2026-10-25&date_to=2026-10-25&timezone=Europe/Berlin',
    );
    assert.equal(Date.parse(autumn.to) - Date.parse(autumn.from), 25 * HOUR);
    assert.equal(autumn.totals.leads, 4);
    // Half- and quarter-hour offsets: India is UTC+5:30, Nepal UTC+5:45 (no DST in either).
    await insertLeads(ta.db, [
      lead('2026-05-10T18:29:00.000Z'),
      lead('2026-05-10T18:30:00.000Z'),
      lead('2026-05-10T18:14:00.000Z'),
      lead('2026-05-10T18:16:00.000Z'),
    ]);
    assert.deepEqual(await days('2026-05-10', '2026-05-11', 'Asia/Kolkata'), { '2026-05-10': 3, '2026-05-11': 1 });
    assert.deepEqual(await days('2026-05-10', '2026-05-11', 'Asia/Kathmandu'), { '2026-05-10': 1, '2026-05-11': 3 });
    // Where DST skips midnight (Chile, 6 September 2026: 00:00 → 01:00), the day starts at 01:00.
    await insertLeads(ta.db, [lead('2026-09-06T03:30:00.000Z'), lead('2026-09-06T04:10:00.000Z')]); // 23:30 -04 on the 5th; 01:10 -03
    const chile = await getJson(
      ta,
      '/api/analytics/report?group_by=day&date_from=2026-09-05&date_to=2026-09-06&timezone=America/Santiago',
    );
    assert.deepEqual([chile.from, chile.to], ['2026-09-05T04:00:00.000Z', '2026-09-07T03:00:00.000Z']);
    assert.deepEqual(
      chile.rows.map((r: any) => [r.key, r.leads]),
      [
        ['2026-09-05', 1],
        ['2026-09-06', 1],
      ],
    );
    // Weeks start on Monday in the zone: Sunday 23:30 UTC is Monday in Berlin.
    await insertLeads(ta.db, [lead('2026-06-07T23:30:00.000Z')]); // a Sunday in UTC
    const weeks = async (tz: string) =>
      (
        await getJson(ta, `/api/analytics/report?group_by=week&date_from=2026-06-01&date_to=2026-06-14&timezone=${tz}`)
      ).rows.map((r: any) => [r.key, r.leads]);
    assert.deepEqual(await weeks('UTC'), [
      ['2026-W23', 1],
      ['2026-W24', 0],
    ]);
    assert.deepEqual(await weeks('Europe/Berlin'), [
      ['2026-W23', 0],
      ['2026-W24', 1],
    ]);
  });

  test('date_type=ftd counts FTDs and their revenue on the FTD day, everything else on the registration day', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertAnalyticsWorld(ta.db);
    const rows = analyticsDataset(w);
    await insertLeads(ta.db, rows);
    // Registered before the range, deposited inside it; and registered inside, deposited after.
    assert.ok(rows.some((r) => r.created_at! < MARCH_FROM && r.ftd_at && r.ftd_at >= MARCH_FROM));
    assert.ok(rows.some((r) => r.created_at! < MARCH_TO && r.ftd_at && r.ftd_at >= MARCH_TO));
    const summary = await getJson(ta, `/api/analytics/summary?${MARCH_BERLIN}&date_type=ftd`);
    assert.equal(summary.date_type, 'ftd');
    const want = expectedAnalytics(rows, MARCH_FROM, MARCH_TO, 'ftd').get('all')!;
    assert.deepEqual(summary.totals, want);
    assert.notDeepEqual(
      want,
      expectedAnalytics(rows, MARCH_FROM, MARCH_TO, 'registration').get('all'),
      'the data set tells the two modes apart',
    );
    const byDay = await getJson(ta, `/api/analytics/report?group_by=day&then_by=partner&${MARCH_BERLIN}&date_type=ftd`);
    assert.deepEqual(byDay.totals, want);
    assertAnalyticsGroups(
      byDay.rows,
      expectedAnalytics(rows, MARCH_FROM, MARCH_TO, 'ftd', (_r, at) => localDate(at, 'Europe/Berlin')),
      'ftd by day',
    );
    const byPartner = await getJson(ta, `/api/analytics/report?group_by=partner&${MARCH_BERLIN}&date_type=ftd`);
    assertAnalyticsGroups(
      byPartner.rows,
      expectedAnalytics(rows, MARCH_FROM, MARCH_TO, 'ftd', (r) => r.partner_id ?? null),
      'ftd by partner',
    );
  });

  test('updates and deletes of leads show at once; ranges that cut hours in the middle are exact', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertAnalyticsWorld(ta.db);
    const rows = analyticsDataset(w);
    const ids = await insertLeads(ta.db, rows);
    const byId = new Map(ids.map((id, i) => [id, rows[i]]));
    const change = async (i: number, patch: Partial<LeadInput>) => {
      await ta.db.updateTable('leads').set(patch).where('id', '=', ids[i]).execute();
      Object.assign(byId.get(ids[i])!, patch);
    };
    await change(10, { status: 'delivered', partner_id: w.p2, cost_cents: 1234 }); // rejected → delivered
    await change(11, { ftd_at: '2026-03-12T09:00:00.000Z', revenue_cents: 77_700 }); // a new FTD
    await change(12, {
      created_at: '2026-03-20T12:00:00.000Z',
      country: 'GB',
      campaign_id: w.c2,
      traffic_provider_id: w.t2,
    }); // moves day and groups
    await change(13, { ftd_at: null, revenue_cents: 0 }); // an FTD taken back
    await change(14, { sale_status: 'Call back', autologin_url: 'https://x.example/a' }); // nothing analytics counts
    // Fraud flags: raised and cleared alone (nothing does it today but must stay counted), with a
    // status change, and on a lead that moves to another hour, provider and campaign.
    assert.deepEqual([rows[15].flags, rows[16].flags, rows[17].flags, rows[18].flags], [0, 1 << 2, 0, 0]);
    await change(15, { flags: 0b11 });
    await change(16, { flags: 0 });
    assert.equal(rows[17].traffic_provider_id, w.t2);
    await change(17, {
      flags: 1 << 4,
      created_at: '2026-03-22T08:00:00.000Z',
      traffic_provider_id: w.t1,
      campaign_id: w.c3,
      flow_id: null,
    });
    await change(18, { flags: 1, status: 'rejected' });
    assert.notEqual(rows[26].flags, 0);
    await change(26, { status: 'failed' }); // a flagged lead whose status changes
    // Deleted: a flagged lead and one without flags.
    assert.ok(rows[21].flags !== 0 && rows[20].flags === 0);
    await ta.db.deleteFrom('leads').where('id', 'in', [ids[20], ids[21]]).execute();
    byId.delete(ids[20]);
    byId.delete(ids[21]);
    const now = [...byId.values()];
    assert.ok(rows[13].ftd_at === null && rows[11].ftd_at !== null);

    const qs = `${MARCH_BERLIN}&date_type=ftd`;
    assert.deepEqual(
      (await getJson(ta, `/api/analytics/summary?${qs}`)).totals,
      expectedAnalytics(now, MARCH_FROM, MARCH_TO, 'ftd').get('all'),
    );
    const day = (_r: LeadInput, at: number) => localDate(at, 'Europe/Berlin');
    assertAnalyticsGroups(
      (await getJson(ta, `/api/analytics/report?group_by=day&${MARCH_BERLIN}`)).rows,
      expectedAnalytics(now, MARCH_FROM, MARCH_TO, 'registration', day),
      'after changes, by day',
    );
    assertAnalyticsGroups(
      (await getJson(ta, `/api/analytics/report?group_by=partner&${qs}`)).rows,
      expectedAnalytics(now, MARCH_FROM, MARCH_TO, 'ftd', (r) => r.partner_id ?? null),
      'after changes, by partner',
    );

    // Instants that are not on the hour: the partial hours at both ends count exactly.
    const from = '2026-03-05T14:47:00.000Z';
    const to = '2026-03-21T00:45:30.500Z';
    assert.ok(
      now.some((r) => r.created_at! >= '2026-03-05T14:00' && r.created_at! < from),
      'a lead in the cut-off part of the first hour',
    );
    assert.ok(
      now.some((r) => r.created_at! >= '2026-03-21T00:00' && r.created_at! < to),
      'a lead in the kept part of the last hour',
    );
    for (const dateType of ['registration', 'ftd'] as const) {
      const body = await getJson(
        ta,
        `/api/analytics/report?group_by=day&then_by=country&date_from=${from}&date_to=${to}&timezone=Europe/Berlin&date_type=${dateType}`,
      );
      assert.deepEqual([body.from, body.to], [from, to]);
      assert.deepEqual(body.totals, expectedAnalytics(now, from, to, dateType).get('all'), dateType);
      assertAnalyticsGroups(body.rows, expectedAnalytics(now, from, to, dateType, day), `cut hours ${dateType}`);
    }
    // Less than an hour, inside one hour.
    const inner = await getJson(
      ta,
      `/api/analytics/summary?date_from=2026-03-05T14:17:00Z&date_to=2026-03-05T14:59:00Z`,
    );
    assert.equal(inner.totals.leads, 1);
    assert.deepEqual(
      inner.totals,
      expectedAnalytics(now, '2026-03-05T14:17:00.000Z', '2026-03-05T14:59:00.000Z', 'registration').get('all'),
    );

    // The rollup tables hold exactly what a fresh count of leads gives.
    const rollup = await (ta.db as any)
      .selectFrom('lead_stats_hourly')
      .select([
        'hour',
        'partner_id',
        'country',
        'n_leads',
        'n_delivered',
        'n_ftd',
        'cost_cents',
        'revenue_cents',
        'revenue_no_ftd_cents',
        'n_flagged',
        'campaign_id',
        'traffic_provider_id',
        'flow_id',
      ])
      .where('n_leads', '!=', 0)
      .execute();
    const fresh = new Map<string, number[]>();
    for (const r of now) {
      const k = `${r.created_at!.slice(0, 13)}|${r.partner_id ?? ''}|${r.country}|${r.campaign_id ?? ''}|${r.traffic_provider_id}|${r.flow_id ?? ''}`;
      const v = fresh.get(k) ?? [0, 0, 0, 0, 0, 0, 0];
      fresh.set(k, [
        v[0] + 1,
        v[1] + (r.status === 'delivered' ? 1 : 0),
        v[2] + (r.ftd_at ? 1 : 0),
        v[3] + (r.cost_cents ?? 0),
        v[4] + (r.revenue_cents ?? 0),
        v[5] + (r.ftd_at ? 0 : (r.revenue_cents ?? 0)),
        v[6] + (r.flags ? 1 : 0),
      ]);
    }
    const sumBy = (list: number[][]) => list.reduce((a, v) => a.map((x, i) => x + v[i]), [0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(
      sumBy(
        rollup.map((r: any) =>
          [r.n_leads, r.n_delivered, r.n_ftd, r.cost_cents, r.revenue_cents, r.revenue_no_ftd_cents, r.n_flagged].map(
            Number,
          ),
        ),
      ),
      sumBy([...fresh.values()]),
    );
    assert.equal(rollup.length, fresh.size, 'one rollup row per hour and combination');
    // Flagged leads row by row: the full rollup, and the providers' (traffic_provider_id, hour).
    assert.deepEqual(
      Object.fromEntries(
        rollup
          .filter((r: any) => Number(r.n_flagged))
          .map((r: any) => [
            `${r.hour}|${r.partner_id}|${r.country}|${r.campaign_id}|${r.traffic_provider_id}|${r.flow_id}`,
            Number(r.n_flagged),
          ])
          .sort(),
      ),
      Object.fromEntries(
        [...fresh]
          .filter(([, v]) => v[6])
          .map(([k, v]) => [k, v[6]])
          .sort(),
      ),
    );
    const byProvider = new Map<string, number[]>();
    for (const r of now) {
      const k = `${r.traffic_provider_id}|${r.created_at!.slice(0, 13)}`;
      const v = byProvider.get(k) ?? [0, 0];
      byProvider.set(k, [v[0] + 1, v[1] + (r.flags ? 1 : 0)]);
    }
    const providerRows = await (ta.db as any)
      .selectFrom('lead_provider_stats_hourly')
      .select(['traffic_provider_id', 'hour', 'n_leads', 'n_flagged'])
      .where('n_leads', '!=', 0)
      .execute();
    assert.deepEqual(
      Object.fromEntries(
        providerRows
          .map((r: any) => [`${r.traffic_provider_id}|${r.hour}`, [Number(r.n_leads), Number(r.n_flagged)]])
          .sort(),
      ),
      Object.fromEntries([...byProvider].sort()),
    );

    // And the (hour, country) rollup, row by row, every measure.
    const measuresOf = (r: LeadInput) => [
      1,
      +(r.status === 'delivered'),
      +(r.status === 'rejected'),
      +(r.status === 'duplicate'),
      +(r.status === 'failed'),
      +!!r.ftd_at,
      r.cost_cents ?? 0,
      r.revenue_cents ?? 0,
      r.ftd_at ? 0 : (r.revenue_cents ?? 0),
      +!!r.flags,
    ];
    const byCountry = new Map<string, number[]>();
    for (const r of now) {
      const k = `${r.created_at!.slice(0, 13)}|${r.country}`;
      byCountry.set(
        k,
        (byCountry.get(k) ?? [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).map((x, i) => x + measuresOf(r)[i]),
      );
    }
    const countryRows = await (ta.db as any)
      .selectFrom('lead_country_stats_hourly')
      .selectAll()
      .where('n_leads', '!=', 0)
      .execute();
    const stored = new Map<string, number[]>(
      countryRows.map((r: any) => [
        `${r.hour}|${r.country}`,
        [
          r.n_leads,
          r.n_delivered,
          r.n_rejected,
          r.n_duplicate,
          r.n_failed,
          r.n_ftd,
          r.cost_cents,
          r.revenue_cents,
          r.revenue_no_ftd_cents,
          r.n_flagged,
        ].map(Number),
      ]),
    );
    assert.deepEqual(Object.fromEntries([...stored].sort()), Object.fromEntries([...byCountry].sort()));
  });

  test("defaults: the operator's own time zone and the last 30 days up to today", async (t) => {
    // One fixed instant for the test and the server (mocked Date): "today" cannot change between
    // writing the leads and asking for the report, whenever the run crosses midnight in New York.
    t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-06-15T15:30:00.000Z') });
    const ta = await buildTestApp(t, engine);
    const w = await insertAnalyticsWorld(ta.db);
    const patched = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: '/api/profile',
      payload: { timezone: 'America/New_York' },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    const now = Date.now();
    await insertLeads(ta.db, [
      { traffic_provider_id: w.t1, created_at: iso(now - 60_000) },
      { traffic_provider_id: w.t1, created_at: iso(now - 10 * 24 * HOUR) },
      { traffic_provider_id: w.t1, created_at: iso(now - 40 * 24 * HOUR) },
    ]);
    const body = await getJson(ta, '/api/analytics/report?group_by=day');
    assert.equal(body.timezone, 'America/New_York');
    assert.equal(body.rows.length, 30);
    assert.equal(body.rows.at(-1).key, localDate(now, 'America/New_York'));
    assert.equal(body.rows.at(-1).key, '2026-06-15', 'the server reads the same fixed clock');
    assert.equal(body.totals.leads, 2);
    // The range starts at local midnight 29 days before today.
    assert.equal(localDate(Date.parse(body.from), 'America/New_York'), body.rows[0].key);
    assert.notEqual(localDate(Date.parse(body.from) - 1, 'America/New_York'), body.rows[0].key);
    // An explicit zone wins over the operator's, and comes back spelled canonically.
    assert.equal((await getJson(ta, '/api/analytics/summary?timezone=asia/tokyo')).timezone, 'Asia/Tokyo');
  });
});
