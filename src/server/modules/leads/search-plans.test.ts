// Plans of the real statements the Leads routes run. The lead indexes on columns a new lead
// leaves empty are partial (migration 20261207T000000Z_partial_lead_indexes): they hold only the
// leads with a value, and the queries they serve must still find them (SQLite's plans, each with
// no scan of the whole lead table; PostgreSQL proves "is not null" from any strict comparison on
// its own). On PostgreSQL, "FTD: no" must walk the date index, not read every lead.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompiledQuery } from 'kysely';
import { buildTestApp, call, postgresOnly, type TestApp } from '../../../../test/helpers.js';
import { observeQueries } from '../../db/query-observers.js';
import { insertLeads, insertLeadWorld } from '../../../../test/fixtures.js';
import { FEW_LINKED } from './search-plan.js';
import { FLAGS } from '../quality/flags.js';

/** SQLite's plan of a statement the app ran (its parameters as nulls), one line. */
async function planOf(ta: TestApp, statement: string) {
  const nulls = Array.from(statement.matchAll(/\?/g), () => null);
  const plan = await ta.db.executeQuery(CompiledQuery.raw(`explain query plan ${statement}`, nulls));
  return plan.rows.map((r) => (r as { detail: string }).detail).join(' | ');
}

/** A search: its answer, its rows' ids, the plan of its page's statement and every statement it ran. */
async function searched(ta: TestApp, statements: string[], url: string) {
  const from = statements.length;
  const res = await call(ta.app, ta.ownerToken, { method: 'GET', url });
  assert.equal(res.statusCode, 200, res.body);
  const ran = statements.slice(from);
  const page = ran.find((s) => /\bleads\b/.test(s) && /order by/i.test(s));
  assert.ok(page, ran.join('\n'));
  const body = res.json();
  return { body, ids: (body.data as { id: string }[]).map((l) => l.id), plan: await planOf(ta, page), ran };
}

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

test('SQLite: "Autologin opened" and "Re-injected" start from the few linked leads instead of walking every lead', async (t) => {
  const statements: string[] = [];
  const ta = await buildTestApp(t, 'sqlite', { onQuery: (sql) => statements.push(sql) });
  const w = await insertLeadWorld(ta.db);
  const ids = await insertLeads(
    ta.db,
    Array.from({ length: 400 }, (_, i) => ({
      traffic_provider_id: w.providerA,
      created_at: new Date(Date.now() - i * 60_000).toISOString(),
      status: 'delivered',
      partner_id: w.partnerA,
    })),
  );
  const now = new Date().toISOString();
  const link = (lead_id: string, n: number, opens: number) => ({
    token_hash: `${lead_id}-${n}`,
    lead_id,
    partner_id: w.partnerA,
    single_use: 0,
    created_at: now,
    opens,
  });
  // Every 40th lead opened its link, every 40th (offset 20) has one it never opened; every 50th was re-injected.
  const opened = ids.filter((_, i) => i % 40 === 0);
  const unopened = ids.filter((_, i) => i % 40 === 20);
  const reinjected = ids.filter((_, i) => i % 50 === 0);
  await ta.db
    .insertInto('autologin_links')
    .values([...opened.map((id) => link(id, 0, 2)), ...unopened.map((id) => link(id, 0, 0))])
    .execute();
  await ta.db
    .insertInto('injection_jobs')
    .values({
      id: 'job',
      state: 'done',
      per_minute: 60,
      reoffer: 0,
      tokens: 0,
      selection: '{}',
      total: 8,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await ta.db
    .insertInto('injection_items')
    .values(reinjected.map((lead_id, i) => ({ job_id: 'job', lead_id, state: i % 2 ? 'sent' : 'delivered' })))
    .execute();

  const search = (query: string) => searched(ta, statements, `/api/leads/search?limit=500&${query}`);
  const newestFirst = (list: string[]) => ids.filter((id) => list.includes(id));
  const cases: [string, string[]][] = [
    ['autologin_opened=true', newestFirst(opened)],
    ['autologin_opened=false', newestFirst(unopened)],
    ['reinjected=true', newestFirst(reinjected)],
    ['reinjected=true&autologin_opened=true', newestFirst(reinjected.filter((id) => opened.includes(id)))],
  ];
  for (const [query, expected] of cases) {
    const { ids: got, plan } = await search(query);
    assert.deepEqual(got, expected, query);
    // The linked set is the outer loop; each lead is looked up by its primary key.
    assert.match(plan, /SEARCH leads USING INDEX sqlite_autoindex_leads_1 \(id=\?\)/, `${query}\n${plan}`);
    assert.doesNotMatch(plan, /SCAN leads\b/, `${query}: a walk of the lead table\n${plan}`);
  }
  const counted = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/leads/count?autologin_opened=true' });
  assert.equal(counted.json().count, opened.length, counted.body);

  // Past FEW_LINKED opened links (here many on the newest lead, which keeps the answer), the
  // matches are common enough that walking the date index finds a page sooner: same answer.
  await ta.db
    .insertInto('autologin_links')
    .values(Array.from({ length: FEW_LINKED }, (_, n) => link(opened[0], n + 1, 1)))
    .execute();
  const { ids: walked, plan } = await search('autologin_opened=true');
  assert.deepEqual(walked, newestFirst(opened));
  assert.match(plan, /SCAN leads USING INDEX leads_created/, plan);
});

test('SQLite: a sub id without a provider seeks each provider for a rare value and walks the date index for a common one', async (t) => {
  const statements: string[] = [];
  const ta = await buildTestApp(t, 'sqlite', { onQuery: (sql) => statements.push(sql) });
  const w = await insertLeadWorld(ta.db);
  // 1,200 leads share sub_id1 "fb" (more than the probe's 1,000); one has the click id "c-7".
  const ids = await insertLeads(
    ta.db,
    Array.from({ length: 1500 }, (_, i) => ({
      traffic_provider_id: i % 2 ? w.providerA : w.providerB,
      created_at: new Date(Date.now() - i * 60_000).toISOString(),
      sub_id1: i % 5 === 4 ? 'ig' : 'fb',
      sub_id3: i === 700 ? 'c-7' : `click-${i}`,
    })),
  );
  const search = (query: string) => searched(ta, statements, `/api/leads/search?limit=50&${query}`);
  // With and without statistics: with them SQLite skip-scanned the sub id index and sorted every
  // match of a common value; without them it walked every lead for a click id.
  for (const analyzed of [false, true]) {
    if (analyzed) await ta.db.executeQuery(CompiledQuery.raw('analyze'));
    const common = await search('sub_id1=fb');
    assert.deepEqual(common.ids, ids.filter((_, i) => i % 5 !== 4).slice(0, 50));
    assert.match(common.plan, /SCAN leads USING INDEX leads_created/, common.plan);
    assert.doesNotMatch(common.plan, /TEMP B-TREE FOR ORDER BY/, `common: every match sorted\n${common.plan}`);
    const rare = await search('sub_id3=c-7');
    assert.deepEqual(rare.ids, [ids[700]]);
    assert.match(rare.plan, /INDEX leads_provider_sub_id3 \(traffic_provider_id=\? AND sub_id3=\?\)/, rare.plan);
    assert.doesNotMatch(rare.plan, /SCAN leads\b/, `rare: a walk of the lead table\n${rare.plan}`);
  }
  // The first page's total has no order: it counts from the sub id index even for a common
  // value (walking the date index to the count's cap read every lead at 10,000,000).
  const from = statements.length;
  const res = await call(ta.app, ta.ownerToken, {
    method: 'GET',
    url: '/api/leads/search?limit=50&total=true&sub_id1=fb',
  });
  assert.deepEqual(res.json().total, { count: 1200, exact: true }, res.body);
  // The count runs last, after the page and the probe that chose the page's plan.
  const count = statements
    .slice(from)
    .filter((s) => /count\(/i.test(s) && /sub_id1/.test(s))
    .at(-1);
  assert.ok(count, statements.slice(from).join('\n'));
  const plan = await planOf(ta, count);
  assert.match(plan, /INDEX leads_provider_sub_id1 \(traffic_provider_id=\? AND sub_id1=\?\)/, plan);
  assert.doesNotMatch(plan, /leads_created/, plan);
});

postgresOnly(
  'PostgreSQL: a sub id without a provider is sought under each provider (no skip scan there)',
  async (t) => {
    const statements: string[] = [];
    const ta = await buildTestApp(t, 'postgres', { onQuery: (sql) => statements.push(sql) });
    const w = await insertLeadWorld(ta.db);
    const ids = await insertLeads(
      ta.db,
      Array.from({ length: 40 }, (_, i) => ({
        traffic_provider_id: i % 2 ? w.providerA : w.providerB,
        created_at: new Date(Date.now() - i * 60_000).toISOString(),
        sub_id3: i === 7 ? 'c-7' : `click-${i}`,
      })),
    );
    const from = statements.length;
    const res = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/leads/search?limit=50&sub_id3=c-7' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      (res.json().data as { id: string }[]).map((l) => l.id),
      [ids[7]],
    );
    // PostgreSQL 15 cannot skip-scan (traffic_provider_id, sub_id3): without the providers leading
    // it walked the date index, 372–680 ms for a click id at 10,000,000 leads (bench/RESULTS.md).
    const page = statements.slice(from).find((s) => /order by/i.test(s) && /sub_id3/.test(s));
    assert.ok(page, statements.slice(from).join('\n'));
    assert.match(
      page,
      /"leads"\."traffic_provider_id" in \(select "traffic_providers"\."id" from "traffic_providers"\)/,
      page,
    );
  },
);

test('SQLite: a fraud flag, "Flagged" and a score cap walk only the flagged leads, in either order of dates', async (t) => {
  const statements: string[] = [];
  const ta = await buildTestApp(t, 'sqlite', { onQuery: (sql) => statements.push(sql) });
  const w = await insertLeadWorld(ta.db);
  // 600 leads, every 30th flagged (bit 2, score 80), and one of those also bit 8 (score 50).
  const ids = await insertLeads(
    ta.db,
    Array.from({ length: 600 }, (_, i) => ({
      traffic_provider_id: w.providerA,
      created_at: new Date(Date.now() - i * 60_000).toISOString(),
      status: 'delivered',
      partner_id: w.partnerA,
      delivered_at: new Date(Date.now() - i * 60_000).toISOString(),
      flags: i % 30 ? 0 : i === 300 ? 2 | 8 : 2,
      quality_score: i % 30 ? 100 : i === 300 ? 50 : 80,
    })),
  );
  const flagged = ids.filter((_, i) => i % 30 === 0);
  const search = (query: string) => searched(ta, statements, `/api/leads/search?limit=100&${query}`);
  const cases: [string, string[]][] = [
    ['flagged=true', flagged],
    [`flag=${FLAGS[1]}`, flagged],
    [`flag=${FLAGS[3]}`, [ids[300]]],
    ['max_score=60', [ids[300]]],
    ['max_score=99', flagged],
  ];
  for (const [query, expected] of cases) {
    const byRegistration = await search(query);
    assert.deepEqual(byRegistration.ids, expected, query);
    assert.match(byRegistration.plan, /SCAN leads USING INDEX leads_flagged/, `${query}\n${byRegistration.plan}`);
    // By delivery date it walks that date's index, never sorting every flagged lead.
    const byDelivery = await search(`${query}&date_type=delivered`);
    assert.deepEqual(byDelivery.ids, expected, `${query}, by delivery date`);
    assert.doesNotMatch(byDelivery.plan, /TEMP B-TREE FOR ORDER BY/, `${query}\n${byDelivery.plan}`);
  }
  // Not flagged, and no cap under 100: every lead is a candidate, walked by date as before.
  assert.equal((await search('flagged=false')).ids.length, 100);
  assert.doesNotMatch((await search('max_score=100')).plan, /leads_flagged/);
});

test('SQLite: a first and last name, each common, walks the date index for a common pair and reads the name index for a rare one', async (t) => {
  const statements: string[] = [];
  const ta = await buildTestApp(t, 'sqlite', { onQuery: (sql) => statements.push(sql) });
  const w = await insertLeadWorld(ta.db);
  // 1,100 Ava Jones and 1,100 Mia Brown (every fifth of the first 25), and 5 Ava Brown: "Ava" and
  // "Brown" are each common (the probe counts 1,000), the pair is not.
  const names = Array.from({ length: 2205 }, (_, i) =>
    i < 25 && i % 5 === 0 ? ['Ava', 'Brown'] : i % 2 ? ['Ava', 'Jones'] : ['Mia', 'Brown'],
  );
  const ids = await insertLeads(
    ta.db,
    names.map(([first_name, last_name], i) => ({
      traffic_provider_id: w.providerA,
      created_at: new Date(Date.now() - i * 60_000).toISOString(),
      first_name,
      last_name,
    })),
  );
  await ta.db.executeQuery(CompiledQuery.raw('analyze'));
  const named = (first: string, last: string) => ids.filter((_, i) => names[i][0] === first && names[i][1] === last);
  const search = async (q: string, more = '') => {
    const url = `/api/leads/search?limit=50&total=true&q=${encodeURIComponent(q)}${more}`;
    const { body, ids: found, plan, ran } = await searched(ta, statements, url);
    // The count runs last, after the probes that chose its plan and the page's.
    const count = ran.filter((s) => /count\(/i.test(s) && /first_name/.test(s)).at(-1);
    return { ids: found, total: body.total, page: plan, count: count ? await planOf(ta, count) : null };
  };
  const common = await search('Ava Jones');
  assert.deepEqual(common.ids, named('Ava', 'Jones').slice(0, 50));
  assert.deepEqual(common.total, { count: 1100, exact: true });
  assert.match(common.page, /SCAN leads USING INDEX leads_created/, common.page);
  assert.doesNotMatch(common.page, /TEMP B-TREE FOR ORDER BY/, `a common pair: every match sorted\n${common.page}`);
  // Its count reads the pair from the names' index, not every lead by date.
  assert.ok(common.count);
  assert.doesNotMatch(common.count, /leads_created|SCAN leads\b/, common.count);
  // Within a date range the count walks the range instead: the index would read every match of
  // all time and fetch each to test its date.
  const from = new Date(Date.now() - 2 * 3_600_000).toISOString(); // the last 120 of 2,205 leads
  const ranged = await search('Ava Jones', `&date_from=${encodeURIComponent(from)}`);
  assert.ok(ranged.count);
  assert.match(ranged.count, /SEARCH leads USING INDEX leads_created/, ranged.count);
  const rare = await search('Ava Brown');
  assert.deepEqual(rare.ids, named('Ava', 'Brown'));
  assert.doesNotMatch(rare.page, /SCAN leads\b/, `a rare pair: a walk of the lead table\n${rare.page}`);
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
