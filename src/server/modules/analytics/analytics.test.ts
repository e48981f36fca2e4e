// GET /api/analytics/summary and /report over HTTP on every engine: access, totals, every
// grouping, then_by, filters and validation. Every expected number comes from the rows the test
// inserted (test/fixtures.ts: expectedAnalytics), never from the code under test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  analyticsDataset,
  analyticsMeasures,
  expectedAnalytics,
  insertAnalyticsWorld,
  insertLeads,
  isoWeek,
  localDate,
  type LeadInput,
  assertAnalyticsGroups,
} from '../../../../test/fixtures.js';
import {
  buildTestApp,
  call,
  getJson,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  parseCsv,
} from '../../../../test/helpers.js';

const MARCH_BERLIN = 'date_from=2026-03-01&date_to=2026-03-31&timezone=Europe/Berlin';
const MARCH_FROM = '2026-02-28T23:00:00.000Z'; // midnight CET
const MARCH_TO = '2026-03-31T22:00:00.000Z'; // midnight CEST after the 29th

forEachDatabase('Analytics', (engine) => {
  test('needs analytics:view: 401 without a credential, 403 for a role or key without it, 200 with it', async (t) => {
    const ta = await buildTestApp(t, engine);
    for (const path of ['/api/analytics/summary', '/api/analytics/report?group_by=day']) {
      expectProblem(await call(ta.app, null, { method: 'GET', url: path }), 401, 'unauthorized');
    }
    const noRole = await newOperator(ta, ['leads:view']);
    expectProblem(await call(ta.app, noRole.token, { method: 'GET', url: '/api/analytics/summary' }), 403, 'forbidden');
    const noScope = await newApiKey(ta, ['leads:view']);
    expectProblem(
      await call(ta.app, noScope.secret, { method: 'GET', url: '/api/analytics/report?group_by=day' }),
      403,
      'insufficient_scope',
    );
    const viewer = await newOperator(ta, ['analytics:view']);
    assert.equal((await getJson(ta, '/api/analytics/summary', viewer.token)).totals.leads, 0);
    const key = await newApiKey(ta, ['analytics:view']);
    assert.equal((await getJson(ta, '/api/analytics/report?group_by=partner', key.secret)).rows.length, 0);
  });

  test('summary totals equal an independent count of the same leads', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertAnalyticsWorld(ta.db);
    const rows = analyticsDataset(w);
    await insertLeads(ta.db, rows);
    const body = await getJson(ta, `/api/analytics/summary?${MARCH_BERLIN}`);
    assert.deepEqual(
      { from: body.from, to: body.to, timezone: body.timezone, date_type: body.date_type, currency: body.currency },
      { from: MARCH_FROM, to: MARCH_TO, timezone: 'Europe/Berlin', date_type: 'registration', currency: 'USD' },
    );
    const want = expectedAnalytics(rows, MARCH_FROM, MARCH_TO, 'registration').get('all')!;
    assert.deepEqual(body.totals, want);
    // The data set exercises every measure, so a measure stuck at zero would show.
    for (const k of ['leads', 'delivered', 'rejected', 'duplicates', 'failed', 'ftds', 'flagged', 'revenue', 'cost'])
      assert.ok(want[k as keyof typeof want] > 0, k);
    assert.ok(want.flagged < want.leads, 'flagged and unflagged leads');
    assert.ok(
      rows.some((r) => r.created_at! < MARCH_FROM) && rows.some((r) => r.created_at! >= MARCH_TO),
      'rows on both sides of the range',
    );
    // Date-times are exact instants: one hour less at each end.
    const narrow = await getJson(
      ta,
      `/api/analytics/summary?date_from=2026-03-01T00:00:00Z&date_to=2026-03-31T21:00:00.000%2B00:00`,
    );
    assert.deepEqual(
      narrow.totals,
      expectedAnalytics(rows, '2026-03-01T00:00:00.000Z', '2026-03-31T21:00:00.000Z', 'registration').get('all'),
    );
  });

  test('report by each dimension matches an independent grouping, with labels, and adds up to the totals', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertAnalyticsWorld(ta.db);
    const rows = analyticsDataset(w);
    await insertLeads(ta.db, rows);
    const tz = 'Europe/Berlin';
    const keyOf: Record<string, (r: LeadInput, at: number) => string | null> = {
      day: (_r, at) => localDate(at, tz),
      week: (_r, at) => isoWeek(localDate(at, tz)),
      month: (_r, at) => localDate(at, tz).slice(0, 7),
      partner: (r) => r.partner_id ?? null,
      traffic_provider: (r) => r.traffic_provider_id,
      campaign: (r) => r.campaign_id ?? null,
      flow: (r) => r.flow_id ?? null,
      country: (r) => r.country ?? null,
    };
    const names: Record<string, string> = {
      [w.p1]: 'Apex',
      [w.p2]: 'Blue',
      [w.t1]: 'Traffic One',
      [w.t2]: 'Traffic Two',
      [w.f1]: 'Flow One',
      [w.f2]: 'Flow Two',
      [w.c1]: 'Camp One',
      [w.c2]: 'Camp Two',
      [w.c3]: 'Camp Three',
      DE: 'Germany',
      FR: 'France',
      GB: 'United Kingdom',
    };
    const totals = expectedAnalytics(rows, MARCH_FROM, MARCH_TO, 'registration').get('all');
    for (const [dim, key] of Object.entries(keyOf)) {
      const body = await getJson(ta, `/api/analytics/report?group_by=${dim}&${MARCH_BERLIN}`);
      assert.equal(body.group_by, dim);
      assert.equal(body.then_by, null);
      assert.deepEqual(body.totals, totals, `${dim}: totals`);
      assertAnalyticsGroups(body.rows, expectedAnalytics(rows, MARCH_FROM, MARCH_TO, 'registration', key), dim);
      const sum = (k: string) => body.rows.reduce((s: number, r: any) => s + r[k], 0);
      for (const k of ['leads', 'delivered', 'ftds', 'flagged'])
        assert.equal(sum(k), totals![k as 'leads'], `${dim}: ${k} adds up`);
      if (dim === 'day') {
        // Every day of March, in order, empty ones included.
        assert.deepEqual(
          body.rows.map((r: any) => r.key),
          Array.from({ length: 31 }, (_, i) => `2026-03-${String(i + 1).padStart(2, '0')}`),
        );
        assert.equal(body.rows[0].label, '2026-03-01');
      } else if (dim === 'week') {
        assert.deepEqual(
          body.rows.map((r: any) => r.key),
          ['2026-W09', '2026-W10', '2026-W11', '2026-W12', '2026-W13', '2026-W14'],
        );
        assert.equal(body.rows[1].label, '2026-W10 (2026-03-02 – 2026-03-08)');
      } else if (dim === 'month') {
        assert.deepEqual(
          body.rows.map((r: any) => [r.key, r.label]),
          [['2026-03', 'March 2026']],
        );
      } else {
        for (const r of body.rows)
          assert.equal(
            r.label,
            r.key === null
              ? { partner: 'Not taken by a partner', campaign: 'No campaign', flow: 'No flow' }[dim]
              : names[r.key],
            `${dim} label`,
          );
        // Most leads first.
        for (let i = 1; i < body.rows.length; i++)
          assert.ok(body.rows[i - 1].leads >= body.rows[i].leads, `${dim}: order`);
        if (['partner', 'campaign', 'flow'].includes(dim))
          assert.ok(
            body.rows.some((r: any) => r.key === null),
            `${dim}: a group for leads without one`,
          );
      }
    }
  });

  test('then_by nests a second level inside each group', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertAnalyticsWorld(ta.db);
    const rows = analyticsDataset(w);
    await insertLeads(ta.db, rows);
    const tz = 'Europe/Berlin';
    const cases: [
      string,
      string,
      (r: LeadInput, at: number) => string | null,
      (r: LeadInput, at: number) => string | null,
    ][] = [
      ['day', 'partner', (_r, at) => localDate(at, tz), (r) => r.partner_id ?? null],
      ['partner', 'country', (r) => r.partner_id ?? null, (r) => r.country!],
      ['month', 'day', (_r, at) => localDate(at, tz).slice(0, 7), (_r, at) => localDate(at, tz)],
      ['campaign', 'week', (r) => r.campaign_id ?? null, (_r, at) => isoWeek(localDate(at, tz))],
    ];
    for (const [first, second, k1, k2] of cases) {
      const body = await getJson(ta, `/api/analytics/report?group_by=${first}&then_by=${second}&${MARCH_BERLIN}`);
      assert.equal(body.then_by, second);
      const outer = expectedAnalytics(rows, MARCH_FROM, MARCH_TO, 'registration', k1);
      assertAnalyticsGroups(body.rows, outer, `${first}`);
      for (const row of body.rows) {
        assert.ok(Array.isArray(row.children), `${first} → ${second}: children`);
        const inner = expectedAnalytics(
          rows.filter((r) => k1(r, Date.parse(r.created_at!)) === row.key),
          MARCH_FROM,
          MARCH_TO,
          'registration',
          k2,
        );
        assertAnalyticsGroups(row.children, inner, `${first} ${row.key} → ${second}`);
        // Inner periods are those with data only.
        for (const c of row.children) assert.ok(c.leads > 0 || c.ftds > 0, `${first} → ${second}: an empty child`);
      }
    }
    const one = await getJson(
      ta,
      `/api/analytics/report?group_by=day&then_by=country&date_from=2026-03-02&date_to=2026-03-02&timezone=UTC`,
    );
    const dayRows = rows.filter((r) => r.created_at!.startsWith('2026-03-02'));
    assert.equal(one.rows.length, 1);
    assert.deepEqual(
      one.rows[0].children.map((c: any) => c.key).sort(),
      [...new Set(dayRows.map((r) => r.country))].sort(),
    );
  });

  test("flagged leads per traffic provider: each provider's count and rate equal a fresh count of its flagged leads, by day inside it too", async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertAnalyticsWorld(ta.db);
    const rows = analyticsDataset(w);
    await insertLeads(ta.db, rows);
    const inMarch = rows.filter((r) => r.created_at! >= MARCH_FROM && r.created_at! < MARCH_TO);
    const fresh = (provider: string) => {
      const mine = inMarch.filter((r) => r.traffic_provider_id === provider);
      const flagged = mine.filter((r) => r.flags !== 0).length;
      return { flagged, flagged_rate: flagged / mine.length };
    };
    const body = await getJson(ta, `/api/analytics/report?group_by=traffic_provider&then_by=day&${MARCH_BERLIN}`);
    assert.deepEqual(
      Object.fromEntries(body.rows.map((r: any) => [r.key, { flagged: r.flagged, flagged_rate: r.flagged_rate }])),
      { [w.t1]: fresh(w.t1), [w.t2]: fresh(w.t2) },
    );
    for (const p of [w.t1, w.t2])
      assert.ok(fresh(p).flagged > 0 && fresh(p).flagged_rate < 1, 'both kinds per provider');
    for (const row of body.rows) {
      const byDay = new Map<string, number>();
      for (const r of inMarch)
        if (r.traffic_provider_id === row.key && r.flags)
          byDay.set(
            localDate(Date.parse(r.created_at!), 'Europe/Berlin'),
            (byDay.get(localDate(Date.parse(r.created_at!), 'Europe/Berlin')) ?? 0) + 1,
          );
      assert.deepEqual(
        Object.fromEntries(row.children.filter((c: any) => c.flagged).map((c: any) => [c.key, c.flagged])),
        Object.fromEntries(byDay),
        'by day',
      );
    }
    // One provider's filter (the full rollup) and date_type=ftd (flags stay on the registration day).
    for (const dateType of ['registration', 'ftd']) {
      const one = await getJson(
        ta,
        `/api/analytics/summary?traffic_provider_id=${w.t2}&${MARCH_BERLIN}&date_type=${dateType}`,
      );
      assert.deepEqual({ flagged: one.totals.flagged, flagged_rate: one.totals.flagged_rate }, fresh(w.t2), dateType);
    }
  });

  test('a report as CSV: detail rows only (the inner groups with their group), no subtotal or Total row; formula-like names guarded', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertAnalyticsWorld(ta.db);
    await ta.db.updateTable('partners').set({ name: '=HYPERLINK("x")' }).where('id', '=', w.p1).execute();
    await insertLeads(ta.db, analyticsDataset(w));
    for (const qs of [
      `group_by=partner&${MARCH_BERLIN}`,
      `group_by=day&then_by=partner&${MARCH_BERLIN}`,
      `group_by=day&then_by=country&${MARCH_BERLIN}`,
    ]) {
      const body = await getJson(ta, `/api/analytics/report?${qs}`);
      const res = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/analytics/report/export?${qs}` });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^text\/csv/);
      assert.equal(
        res.headers['content-disposition'],
        `attachment; filename="report-${body.then_by ? `${body.group_by}-${body.then_by}` : body.group_by}-2026-03-01-to-2026-03-31.csv"`,
      );
      const [header, ...lines] = parseCsv(res.body);
      const measures = [
        'leads',
        'delivered',
        'rejected',
        'duplicates',
        'failed',
        'ftds',
        'conversion_rate',
        'flagged',
        'flagged_rate',
        'revenue',
        'cost',
        'profit',
      ];
      const levels = body.then_by ? [body.group_by, body.then_by] : [body.group_by];
      assert.deepEqual(header, [...levels.flatMap((d: string) => [d, `${d}_key`]), ...measures, 'currency']);
      const guard = (label: string) => (label.startsWith('=') ? `'${label}` : label);
      const expected: string[][] = [];
      const m = (g: Record<string, number>) => [...measures.map((k) => String(g[k])), 'USD'];
      for (const row of body.rows) {
        if (!body.then_by) expected.push([guard(row.label), row.key ?? '', ...m(row)]);
        for (const c of row.children ?? [])
          expected.push([guard(row.label), row.key ?? '', guard(c.label), c.key ?? '', ...m(c)]);
      }
      assert.deepEqual(lines, expected, qs);
      // A spreadsheet's SUM over a column is the report's total (it was 3× with subtotal and Total rows).
      for (const k of ['leads', 'delivered', 'rejected', 'ftds', 'flagged', 'revenue', 'cost']) {
        const col = header.indexOf(k);
        const sum = lines.reduce((n, l) => n + Number(l[col]), 0);
        assert.ok(Math.abs(sum - body.totals[k]) < 0.005, `${qs}: sum of ${k} ${sum} = total ${body.totals[k]}`);
      }
      assert.ok(body.totals.leads > 0);
      if (qs.includes('partner'))
        assert.ok(
          lines.some((l) => l.includes(`'=HYPERLINK("x")`)),
          'the formula-like partner name is guarded',
        );
    }
    // Same validation and access as the report.
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/analytics/report/export?group_by=colour' }),
      400,
      'validation_failed',
    );
    const noRole = await newOperator(ta, ['leads:view']);
    expectProblem(
      await call(ta.app, noRole.token, { method: 'GET', url: '/api/analytics/report/export' }),
      403,
      'forbidden',
    );
  });

  test('filters narrow every measure: partner, traffic provider, campaign, flow, country (several values)', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertAnalyticsWorld(ta.db);
    const rows = analyticsDataset(w);
    await insertLeads(ta.db, rows);
    const cases: [string, (r: LeadInput) => boolean][] = [
      [`partner_id=${w.p1}`, (r) => r.partner_id === w.p1],
      [`traffic_provider_id=${w.t2}`, (r) => r.traffic_provider_id === w.t2],
      [`campaign_id=${w.c1}&campaign_id=${w.c3}`, (r) => r.campaign_id === w.c1 || r.campaign_id === w.c3],
      [`flow_id=${w.f2}`, (r) => r.flow_id === w.f2],
      ['country=DE&country=GB', (r) => r.country === 'DE' || r.country === 'GB'],
      [`country=FR&partner_id=${w.p2}`, (r) => r.country === 'FR' && r.partner_id === w.p2],
      ['partner_id=no-such-partner', () => false],
    ];
    for (const [qs, keep] of cases) {
      const matching = rows.filter(keep);
      for (const dateType of ['registration', 'ftd'] as const) {
        const body = await getJson(ta, `/api/analytics/summary?${MARCH_BERLIN}&date_type=${dateType}&${qs}`);
        const want = expectedAnalytics(matching, MARCH_FROM, MARCH_TO, dateType).get('all') ?? analyticsMeasures();
        assert.deepEqual(body.totals, want, `${qs} ${dateType}`);
      }
      const report = await getJson(ta, `/api/analytics/report?group_by=country&${MARCH_BERLIN}&${qs}`);
      assertAnalyticsGroups(
        report.rows,
        expectedAnalytics(matching, MARCH_FROM, MARCH_TO, 'registration', (r) => r.country!),
        `${qs} by country`,
      );
    }
  });

  test('invalid input is refused with 400 naming each parameter', async (t) => {
    const ta = await buildTestApp(t, engine);
    const fields = async (url: string) => {
      const body = expectProblem(await call(ta.app, ta.ownerToken, { method: 'GET', url }), 400, 'validation_failed');
      return body.errors!.map((e) => e.field).sort();
    };
    assert.deepEqual(await fields('/api/analytics/summary?timezone=Mars/Phobos'), ['timezone']);
    assert.deepEqual(await fields('/api/analytics/summary?date_from=yesterday'), ['date_from']);
    assert.deepEqual(await fields('/api/analytics/summary?date_to=2026-02-30'), ['date_to']);
    assert.deepEqual(
      await fields('/api/analytics/summary?date_from=2026-13-01&date_to=2026-01-01T25:00:00Z&timezone=Nowhere'),
      ['date_from', 'date_to', 'timezone'],
    );
    assert.deepEqual(await fields('/api/analytics/summary?date_from=2026-03-10&date_to=2026-03-09'), ['date_to']);
    assert.deepEqual(await fields('/api/analytics/summary?date_from=2025-01-01&date_to=2026-01-02'), ['date_to']);
    assert.deepEqual(await fields('/api/analytics/summary?date_type=delivered'), ['date_type']);
    // Multi-valued parameters name the bad value's position too.
    assert.deepEqual(await fields('/api/analytics/summary?country=DE&country=germany'), ['country[1]']);
    assert.deepEqual(await fields('/api/analytics/summary?group_by=day'), ['group_by']);
    assert.deepEqual(await fields('/api/analytics/report?group_by=hour'), ['group_by']);
    assert.deepEqual(await fields('/api/analytics/report?group_by=day&then_by=day'), ['then_by']);
    assert.deepEqual(await fields('/api/analytics/report?group_by=day&then_by=sub_id1'), ['then_by']);
    assert.equal((await getJson(ta, '/api/analytics/report')).group_by, 'day', 'group_by defaults to day');
    // The longest range allowed: 366 days (2024 was a leap year).
    assert.equal(
      (await getJson(ta, '/api/analytics/summary?date_from=2024-01-01&date_to=2024-12-31&timezone=UTC')).totals.leads,
      0,
    );
  });
});
