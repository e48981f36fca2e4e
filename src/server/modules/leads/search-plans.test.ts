// Plans of the real statements the Leads routes run. The lead indexes on columns a new lead
// leaves empty are partial (migration 20261207T000000Z_partial_lead_indexes): they hold only the
// leads with a value, and the queries they serve must still find them (SQLite's plans, each with
// no scan of the whole lead table; PostgreSQL proves "is not null" from any strict comparison on
// its own). On PostgreSQL, "FTD: no" must walk the date index, not read every lead.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompiledQuery } from 'kysely';
import { buildTestApp, call, postgresOnly } from '../../../../test/helpers.js';
import { observeQueries } from '../../db/query-observers.js';
import { insertLeads, insertLeadWorld } from '../../../../test/fixtures.js';

test('SQLite: the FTD date, delivery date and sale status reads use their partial indexes, never a scan of leads', async (t) => {
  const statements: string[] = [];
  const ta = await buildTestApp(t, 'sqlite', { onQuery: (sql) => statements.push(sql) });
  const w = await insertLeadWorld(ta.db);
  const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();
  await insertLeads(
    ta.db,
    Array.from({ length: 300 }, (_, i) => ({
      traffic_provider_id: w.providerA,
      created_at: day(i % 60),
      ...(i % 3 === 0
        ? {
            status: 'delivered',
            partner_id: w.partnerA,
            delivered_at: day(i % 60),
            sale_status: i % 2 ? 'New' : 'Busy',
          }
        : {}),
      ...(i % 9 === 0 ? { ftd_at: day(i % 30) } : {}),
    })),
  );
  await ta.db.executeQuery(CompiledQuery.raw('analyze'));

  /** The plan of every statement on leads the request ran, as one line each. */
  const plansOf = async (url: string) => {
    const from = statements.length;
    const res = await call(ta.app, ta.ownerToken, { method: 'GET', url });
    assert.equal(res.statusCode, 200, res.body);
    const plans: string[] = [];
    for (const s of statements.slice(from).filter((s) => /^\s*(with|select)\b/i.test(s) && /\bleads\b/.test(s))) {
      const nulls = Array.from(s.matchAll(/\?/g), () => null);
      const plan = await ta.db.executeQuery(CompiledQuery.raw(`explain query plan ${s}`, nulls));
      plans.push(plan.rows.map((r) => (r as { detail: string }).detail).join(' | '));
    }
    assert.ok(plans.length, `${url}: no statement on leads`);
    return plans.join('\n');
  };
  const range = `date_from=${day(20).slice(0, 10)}&date_to=${day(0).slice(0, 10)}`;
  const cases: [string, RegExp][] = [
    [`/api/leads/search?limit=20&date_type=ftd&${range}`, /INDEX leads_ftd\b/],
    [`/api/leads/search?limit=20&date_type=ftd&is_ftd=true&${range}`, /INDEX leads_ftd\b/],
    [`/api/leads/search?limit=20&date_type=delivered&${range}`, /INDEX leads_delivered\b/],
    [
      `/api/leads/search?limit=20&date_type=delivered&sale_status=New&${range}`,
      /INDEX leads_(delivered|sale_status)\b/,
    ],
    ['/api/leads/sale-statuses', /INDEX leads_sale_status\b/],
    [`/api/leads/search?limit=20&sale_status=New`, /INDEX leads_sale_status \(sale_status=\?\)/],
  ];
  for (const [url, index] of cases) {
    const plans = await plansOf(url);
    assert.match(plans, index, `${url}\n${plans}`);
    assert.doesNotMatch(plans, /SCAN leads(?! USING)/, `${url}: a scan of the whole table\n${plans}`);
    assert.doesNotMatch(plans, /TEMP B-TREE FOR ORDER BY/, `${url}: every match sorted\n${plans}`);
  }
  // The sale statuses themselves: found through the partial index.
  const res = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/leads/sale-statuses' });
  assert.deepEqual(res.json(), { data: ['Busy', 'New'], complete: true });
});

postgresOnly(
  'PostgreSQL: "FTD: no" walks the registration index with the statistics, never a scan and sort of leads',
  async (t) => {
    const ta = await buildTestApp(t, 'postgres');
    const w = await insertLeadWorld(ta.db);
    await insertLeads(
      ta.db,
      Array.from({ length: 3000 }, (_, i) => ({
        traffic_provider_id: w.providerA,
        created_at: new Date(Date.now() - i * 60_000).toISOString(),
        ...(i % 20 === 0 ? { status: 'delivered', partner_id: w.partnerA, ftd_at: new Date().toISOString() } : {}),
      })),
    );
    await ta.db.executeQuery(CompiledQuery.raw('analyze leads'));
    const seen: { sql: string; parameters: readonly unknown[] }[] = [];
    const stop = observeQueries(ta.db, (e) => seen.push(e.query));
    const res = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/leads/search?limit=50&is_ftd=false' });
    stop();
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.length, 50);
    const search = seen.find((q) => /\bfrom "?leads"?\b/i.test(q.sql) && /ftd_at/.test(q.sql));
    assert.ok(search, seen.map((q) => q.sql).join('\n'));
    const plan = await ta.db.executeQuery(CompiledQuery.raw(`explain ${search.sql}`, [...search.parameters]));
    const text = plan.rows.map((r) => Object.values(r as object)[0]).join('\n');
    assert.match(text, /Index Scan Backward using leads_created/, text);
    assert.doesNotMatch(text, /Seq Scan on leads/, text);
  },
);
