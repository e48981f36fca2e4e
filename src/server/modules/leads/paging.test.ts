// Keyset paging of GET /api/leads/search: every lead exactly once, in order, even with ties on
// the date and with leads arriving between page fetches.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, forEachDatabase, type TestApp } from '../../../../test/helpers.js';
import { insertLeads, insertLeadWorld, leadRow, type LeadInput } from '../../../../test/fixtures.js';
import { nowIso } from '../../db/ids.js';

const at = (minutes: number) => new Date(Date.UTC(2026, 9, 1, 10) + minutes * 60_000).toISOString();

async function page(ta: TestApp, qs: string) {
  const res = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/leads/search?${qs}` });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as {
    data: { id: string }[];
    next_cursor: string | null;
    total: { count: number; exact: boolean } | null;
  };
}

/** Follows next_cursor to the end, calling `between` after each page; every id seen, in order. */
async function walk(ta: TestApp, qs: string, between: (n: number) => Promise<void> = async () => {}) {
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const p = await page(ta, `${qs}${cursor ? `&cursor=${cursor}` : ''}`);
    seen.push(...p.data.map((r) => r.id));
    cursor = p.next_cursor;
    await between(++pages);
    assert.ok(pages < 100, 'paging ends');
  } while (cursor);
  return { seen, pages };
}

const newest = (rows: ReturnType<typeof leadRow>[], key: 'created_at' | 'status_updated_at') =>
  [...rows].sort((a, b) => (a[key]! < b[key]! ? 1 : a[key]! > b[key]! ? -1 : a.id < b.id ? 1 : -1)).map((r) => r.id);

forEachDatabase('Leads search paging', (engine) => {
  test('pages cover every lead exactly once, in order, across ties on the date', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    // 9 leads share one registration time: the id breaks the tie, also across page ends.
    const rows = Array.from({ length: 41 }, (_, i) =>
      leadRow({
        traffic_provider_id: w.providerA,
        created_at: i >= 10 && i < 19 ? at(10) : at(i),
        status_updated_at: at(i % 5),
        status: i % 2 ? 'delivered' : 'new',
      }),
    );
    await ta.db.insertInto('leads').values(rows).execute();

    const all = await walk(ta, 'limit=4');
    assert.deepEqual(all.seen, newest(rows, 'created_at'));
    assert.equal(all.pages, 11);

    const updated = await walk(ta, 'limit=3&date_type=status_updated');
    assert.deepEqual(updated.seen, newest(rows, 'status_updated_at'));

    const delivered = await walk(ta, 'limit=5&status=delivered');
    assert.deepEqual(
      delivered.seen,
      newest(
        rows.filter((r) => r.status === 'delivered'),
        'created_at',
      ),
    );

    // Default page size 50; the last page says there is no next one.
    const more = Array.from({ length: 20 }, (_, i) =>
      leadRow({ traffic_provider_id: w.providerB, created_at: at(100 + i) }),
    );
    await ta.db.insertInto('leads').values(more).execute();
    const first = await page(ta, '');
    assert.equal(first.data.length, 50);
    assert.ok(first.next_cursor);
    const second = await page(ta, `cursor=${first.next_cursor}`);
    assert.equal(second.data.length, 11);
    assert.equal(second.next_cursor, null);
    assert.deepEqual(
      [...first.data, ...second.data].map((r) => r.id),
      newest([...rows, ...more], 'created_at'),
    );
    // An exact page: no empty extra page is announced.
    const exact = await page(ta, 'limit=61');
    assert.equal(exact.data.length, 61);
    assert.equal(exact.next_cursor, null);
  });

  test('leads registered between page fetches neither repeat nor push rows out of later pages', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    const specs: LeadInput[] = Array.from({ length: 30 }, (_, i) => ({
      traffic_provider_id: w.providerA,
      created_at: i % 3 ? at(i) : at(0),
    }));
    const rows = specs.map(leadRow);
    await ta.db.insertInto('leads').values(rows).execute();
    const arrived: string[] = [];
    const registrations = await walk(ta, 'limit=4', async () => {
      // New leads arrive now (newer than every page so far), and one ties the busiest time.
      arrived.push(
        ...(await insertLeads(ta.db, [
          { traffic_provider_id: w.providerA, created_at: nowIso() },
          { traffic_provider_id: w.providerB, created_at: nowIso() },
          { traffic_provider_id: w.providerA, created_at: at(0) },
        ])),
      );
    });
    assert.equal(new Set(registrations.seen).size, registrations.seen.length, 'no lead repeats');
    const original = new Set(rows.map((r) => r.id));
    assert.deepEqual(
      registrations.seen.filter((id) => original.has(id)),
      newest(rows, 'created_at'),
      'every original lead once, in order',
    );
    assert.ok(arrived.length >= 3 * 8);
    // The same while status updates are paged by status_updated_at and new leads come in.
    const updated = await walk(ta, 'limit=7&date_type=status_updated', async () => {
      await insertLeads(ta.db, [{ traffic_provider_id: w.providerA, created_at: nowIso() }]);
    });
    assert.equal(new Set(updated.seen).size, updated.seen.length);
    const now = (await ta.db
      .selectFrom('leads')
      .select(['id', 'status_updated_at', 'created_at'])
      .execute()) as ReturnType<typeof leadRow>[];
    const before = new Set([...rows.map((r) => r.id), ...arrived]);
    assert.deepEqual(
      updated.seen.filter((id) => before.has(id)),
      newest(
        now.filter((r) => before.has(r.id)),
        'status_updated_at',
      ),
    );
  });

  test('order=asc walks oldest first, every lead once, under each date type; a cursor keeps its order', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    const rows = Array.from({ length: 23 }, (_, i) =>
      leadRow({
        traffic_provider_id: w.providerA,
        created_at: i >= 5 && i < 11 ? at(5) : at(i),
        status_updated_at: at(i % 4),
        status: i % 3 ? 'delivered' : 'new',
      }),
    );
    await ta.db.insertInto('leads').values(rows).execute();
    const oldest = (key: 'created_at' | 'status_updated_at') => newest(rows, key).reverse();

    assert.deepEqual((await walk(ta, 'limit=4&order=asc')).seen, oldest('created_at'));
    assert.deepEqual((await walk(ta, 'limit=3&order=asc&date_type=status_updated')).seen, oldest('status_updated_at'));
    assert.deepEqual(
      (await walk(ta, 'limit=2&order=asc&status=delivered')).seen,
      newest(
        rows.filter((r) => r.status === 'delivered'),
        'created_at',
      ).reverse(),
    );
    assert.deepEqual(
      (await walk(ta, 'limit=5&order=desc')).seen,
      newest(rows, 'created_at'),
      'desc is the default order, spelled out',
    );

    // A cursor continues only the order it was made for.
    const first = await page(ta, 'limit=4&order=asc');
    const res = await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: `/api/leads/search?limit=4&order=desc&cursor=${first.next_cursor}`,
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().errors[0].field, 'cursor');
    const bad = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/leads/search?order=newest' });
    assert.equal(bad.statusCode, 400, bad.body);
    assert.equal(bad.json().errors[0].field, 'order');
  });

  test('total=true: the first page counts the matches, exactly up to 10,000 and "more" beyond; later pages and plain searches do not count', async (t) => {
    const statements: string[] = [];
    const ta = await buildTestApp(t, engine, { onQuery: (sql) => statements.push(sql) });
    const w = await insertLeadWorld(ta.db);
    await insertLeads(
      ta.db,
      Array.from({ length: 10_001 }, (_, i) => ({
        traffic_provider_id: i < 7 ? w.providerB : w.providerA,
        created_at: at(i % 500),
      })),
    );
    const all = await page(ta, 'limit=5&total=true');
    assert.deepEqual(all.total, { count: 10_000, exact: false });
    const few = await page(ta, `limit=5&total=true&traffic_provider_id=${w.providerB}`);
    assert.deepEqual(few.total, { count: 7, exact: true });
    assert.equal(
      (await page(ta, `limit=5&total=true&traffic_provider_id=${w.providerB}&cursor=${few.next_cursor}`)).total,
      null,
    );
    const none = await page(ta, 'status=failed&total=true');
    assert.deepEqual([none.data.length, none.total], [0, { count: 0, exact: true }]);

    const counts = () => statements.filter((s) => /^select count\(\*\)/i.test(s)).length;
    const before = counts();
    assert.equal((await page(ta, 'limit=5')).total, null, 'not asked for: not counted');
    const whole = await page(ta, `limit=50&total=true&traffic_provider_id=${w.providerB}`);
    assert.deepEqual([whole.data.length, whole.total], [7, { count: 7, exact: true }]);
    assert.equal(
      counts(),
      before,
      'no count statement: none asked for, and a first page holding every match is its own count',
    );
  });
});
