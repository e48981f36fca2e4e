// GET /api/analytics/partners (and its CSV) on every engine: counted from delivery attempts, so a
// lead refused by one partner and taken by the next counts for both. Every expected number comes
// from the attempts the test wrote, never from the code under test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { insertAnalyticsWorld, insertAttempt, insertLeads, type LeadInput } from '../../../../test/fixtures.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  getJson,
  newApiKey,
  newOperator,
  parseCsv,
} from '../../../../test/helpers.js';

const RANGE = 'date_from=2026-03-01&date_to=2026-03-31&timezone=UTC';
const FROM = Date.UTC(2026, 2, 1);
const TO = Date.UTC(2026, 3, 1);

type Outcome = 'accepted' | 'rejected' | 'timeout' | 'error' | 'in_flight';
interface A {
  lead: number;
  partner: string;
  outcome: Outcome;
  reason: string | null;
  at: number;
  ms: number | null;
}

async function world(ta: Awaited<ReturnType<typeof buildTestApp>>) {
  const w = await insertAnalyticsWorld(ta.db);
  const leads: LeadInput[] = [];
  const attempts: A[] = [];
  for (let i = 0; i < 48; i++) {
    const at = FROM + i * 14 * 3_600_000; // through March, the last ones in April
    leads.push({
      traffic_provider_id: i % 2 ? w.t1 : w.t2,
      country: i % 4 < 2 ? 'DE' : 'FR',
      created_at: new Date(at).toISOString(),
      status: 'delivered',
      email: `lead${i}@example.com`,
    });
    if (i % 3 === 0) {
      // Refused by Apex, quoting the lead's email; then taken by Blue.
      attempts.push({
        lead: i,
        partner: w.p1,
        outcome: 'rejected',
        reason: `email lead${i}@example.com already registered`,
        at,
        ms: 100 + i,
      });
      attempts.push({ lead: i, partner: w.p2, outcome: 'accepted', reason: null, at: at + 1000, ms: 300 });
    } else if (i % 3 === 1) {
      attempts.push({ lead: i, partner: w.p1, outcome: 'accepted', reason: null, at, ms: 50 });
    } else {
      attempts.push({ lead: i, partner: w.p2, outcome: 'timeout', reason: 'no answer within 10000 ms', at, ms: null });
      attempts.push({
        lead: i,
        partner: w.p1,
        outcome: i % 2 ? 'error' : 'rejected',
        reason: i % 2 ? 'connection refused (ECONNREFUSED)' : 'HTTP 400: country not served',
        at: at + 1000,
        ms: 20,
      });
    }
  }
  attempts.push({ lead: 1, partner: w.p2, outcome: 'in_flight', reason: null, at: FROM + 3_600_000, ms: null }); // not finished: left out
  const ids = await insertLeads(ta.db, leads);
  for (const [n, a] of attempts.entries()) {
    await insertAttempt(ta.db, {
      lead_id: ids[a.lead],
      partner_id: a.partner,
      attempt_no: n + 1,
      outcome: a.outcome,
      reason: a.reason,
      requested_at: new Date(a.at).toISOString(),
      duration_ms: a.ms,
    });
  }
  return { w, leads, attempts, ids };
}

/** The measures of some attempts, counted here. */
function expected(list: A[]) {
  const done = list.filter((a) => a.outcome !== 'in_flight' && a.at >= FROM && a.at < TO);
  const timed = done.filter((a) => a.ms !== null);
  const accepted = done.filter((a) => a.outcome === 'accepted').length;
  return {
    attempts: done.length,
    accepted,
    rejected: done.filter((a) => a.outcome === 'rejected').length,
    failed: done.filter((a) => a.outcome === 'timeout' || a.outcome === 'error').length,
    acceptance_rate: done.length ? accepted / done.length : 0,
    average_answer_ms: timed.length ? Math.round(timed.reduce((s, a) => s + a.ms!, 0) / timed.length) : null,
  };
}
const pick = (m: Record<string, unknown>) => ({
  attempts: m.attempts,
  accepted: m.accepted,
  rejected: m.rejected,
  failed: m.failed,
  acceptance_rate: m.acceptance_rate,
  average_answer_ms: m.average_answer_ms,
});

forEachDatabase('Partner performance', (engine) => {
  test('needs analytics:view: 401 without a credential, 403 without the permission', async (t) => {
    const ta = await buildTestApp(t, engine);
    for (const url of ['/api/analytics/partners', '/api/analytics/partners/export']) {
      expectProblem(await call(ta.app, null, { method: 'GET', url }), 401, 'unauthorized');
      const noRole = await newOperator(ta, ['leads:view']);
      expectProblem(await call(ta.app, noRole.token, { method: 'GET', url }), 403, 'forbidden');
    }
    const key = await newApiKey(ta, ['analytics:view']);
    assert.deepEqual((await getJson(ta, '/api/analytics/partners', key.secret)).rows, []);
  });

  test('per partner from attempts: a refusal counts for the partner that refused, rates, answer time, top reasons with contacts as placeholders', async (t) => {
    const ta = await buildTestApp(t, engine);
    const { w, attempts } = await world(ta);
    const body = await getJson(ta, `/api/analytics/partners?${RANGE}`);
    assert.deepEqual(pick(body.totals), expected(attempts));
    assert.deepEqual(
      body.rows.map((r: Record<string, unknown>) => ({ key: r.key, label: r.label, ...pick(r) })),
      [w.p1, w.p2]
        .map((p) => ({
          key: p,
          label: p === w.p1 ? 'Apex' : 'Blue',
          ...expected(attempts.filter((a) => a.partner === p)),
        }))
        .sort((a, b) => b.attempts - a.attempts),
    );
    const apex = body.rows.find((r: { key: string }) => r.key === w.p1);
    assert.ok(apex.rejected > 0 && apex.accepted > 0, 'Apex refused some leads that Blue then took');
    // Every "email … already registered" is one reason, and no lead's address shows.
    const inRange = attempts.filter((a) => a.partner === w.p1 && a.at < TO);
    const count = (pred: (a: A) => boolean) => inRange.filter(pred).length;
    assert.deepEqual(
      apex.top_reasons,
      [
        { reason: 'email {email} already registered', attempts: count((a) => a.reason?.startsWith('email') ?? false) },
        { reason: 'HTTP 400: country not served', attempts: count((a) => a.reason === 'HTTP 400: country not served') },
        {
          reason: 'connection refused (ECONNREFUSED)',
          attempts: count((a) => a.reason === 'connection refused (ECONNREFUSED)'),
        },
      ].sort((a, b) => b.attempts - a.attempts || a.reason.localeCompare(b.reason)),
    );
    assert.doesNotMatch(JSON.stringify(body), /example\.com/);
  });

  test('tracked autologin links: per partner and in the grid, those opened and the open rate; null where none were tracked', async (t) => {
    const ta = await buildTestApp(t, engine);
    const { w, leads, attempts, ids } = await world(ta);
    // Blue tracks its links: one per lead it took, opened when the lead number is even; one
    // handed out in April (outside the range).
    const taken = attempts.filter((a) => a.partner === w.p2 && a.outcome === 'accepted');
    const links = taken.map((a, n) => ({
      token_hash: `hash-${n}`,
      lead_id: ids[a.lead],
      partner_id: w.p2,
      single_use: 0,
      created_at: new Date(n === taken.length - 1 ? TO + 3_600_000 : a.at + 5).toISOString(),
      opens: a.lead % 2 ? 0 : 3,
    }));
    await ta.db.insertInto('autologin_links').values(links).execute();
    const inRange = taken.slice(0, -1);
    const opened = (list: A[]) => list.filter((a) => a.lead % 2 === 0).length;
    assert.ok(
      inRange.length > opened(inRange) && opened(inRange) > 0 && inRange.length < taken.length,
      'a mixed world',
    );

    const body = await getJson(ta, `/api/analytics/partners?${RANGE}&then_by=traffic_provider`);
    const blue = body.rows.find((r: { key: string }) => r.key === w.p2);
    const apex = body.rows.find((r: { key: string }) => r.key === w.p1);
    assert.deepEqual([blue.tracked_links, blue.opened_links], [inRange.length, opened(inRange)]);
    assert.equal(blue.open_rate, opened(inRange) / inRange.length);
    assert.deepEqual([apex.tracked_links, apex.opened_links, apex.open_rate], [0, 0, null], 'Apex does not track');
    assert.equal(body.totals.tracked_links, inRange.length);
    for (const provider of [w.t1, w.t2]) {
      const mine = inRange.filter((a) => leads[a.lead].traffic_provider_id === provider);
      const cell = blue.children.find((c: { key: string }) => c.key === provider);
      assert.deepEqual([cell.tracked_links, cell.opened_links], [mine.length, opened(mine)], `Blue × ${provider}`);
    }
    const one = await getJson(ta, `/api/analytics/partners?${RANGE}&traffic_provider_id=${w.t1}`);
    const mine = inRange.filter((a) => leads[a.lead].traffic_provider_id === w.t1);
    assert.equal(one.rows.find((r: { key: string }) => r.key === w.p2).tracked_links, mine.length, 'filters apply');
    const csv = parseCsv(
      (await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/analytics/partners/export?${RANGE}` })).body,
    );
    assert.deepEqual(csv[0].slice(-4), ['tracked_links', 'opened_links', 'open_rate', 'top_reasons']);
  });

  test('then_by=traffic_provider is the provider × partner grid; filters apply to the attempted leads; CSV says the same', async (t) => {
    const ta = await buildTestApp(t, engine);
    const { w, leads, attempts } = await world(ta);
    const body = await getJson(ta, `/api/analytics/partners?${RANGE}&then_by=traffic_provider`);
    assert.equal(body.then_by, 'traffic_provider');
    for (const row of body.rows) {
      const mine = attempts.filter((a) => a.partner === row.key);
      assert.deepEqual(
        row.children
          .map((c: Record<string, unknown>) => ({ key: c.key, label: c.label, ...pick(c) }))
          .sort((a: { key: string }, b: { key: string }) => a.key.localeCompare(b.key)),
        [w.t1, w.t2]
          .map((tp) => ({
            key: tp,
            label: tp === w.t1 ? 'Traffic One' : 'Traffic Two',
            ...expected(mine.filter((a) => leads[a.lead].traffic_provider_id === tp)),
          }))
          .sort((a, b) => a.key.localeCompare(b.key)),
      );
    }
    const de = await getJson(ta, `/api/analytics/partners?${RANGE}&country=DE`);
    assert.deepEqual(pick(de.totals), expected(attempts.filter((a) => leads[a.lead].country === 'DE')));
    const apexOnly = await getJson(ta, `/api/analytics/partners?${RANGE}&partner_id=${w.p1}`);
    assert.deepEqual(
      apexOnly.rows.map((r: { key: string }) => r.key),
      [w.p1],
    );

    const res = await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: `/api/analytics/partners/export?${RANGE}&then_by=traffic_provider`,
    });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/csv/);
    assert.match(
      String(res.headers['content-disposition']),
      /filename="partners-traffic_provider-2026-03-01-to-2026-03-31\.csv"/,
    );
    const csv = parseCsv(res.body);
    assert.deepEqual(csv[0], [
      'partner',
      'partner_key',
      'traffic_provider',
      'traffic_provider_key',
      'attempts',
      'accepted',
      'rejected',
      'failed',
      'acceptance_rate',
      'average_answer_ms',
      'tracked_links',
      'opened_links',
      'open_rate',
      'top_reasons',
    ]);
    const first = body.rows[0];
    assert.deepEqual(csv[1].slice(0, 5), [first.label, first.key, '', '', String(first.attempts)]);
    assert.equal(
      csv[1][13],
      first.top_reasons.map((x: { reason: string; attempts: number }) => `${x.reason} (${x.attempts})`).join('; '),
    );
    assert.deepEqual(csv[2].slice(0, 5), [
      first.label,
      first.key,
      first.children[0].label,
      first.children[0].key,
      String(first.children[0].attempts),
    ]);
    assert.deepEqual(csv.at(-1)!.slice(0, 5), ['Total', '', '', '', String(body.totals.attempts)]);
    assert.equal(
      csv.length,
      1 + body.rows.length + body.rows.reduce((n: number, r: { children: unknown[] }) => n + r.children.length, 0) + 1,
    );
  });

  test('bad input: a grouping it does not have, a date type, a bad day, each named', async (t) => {
    const ta = await buildTestApp(t, engine);
    for (const [query, field] of [
      ['then_by=partner', 'then_by'],
      ['date_type=ftd', 'date_type'],
      ['date_from=2026-02-30', 'date_from'],
    ] as const) {
      const p = expectProblem(
        await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/analytics/partners?${query}` }),
        400,
        'validation_failed',
      );
      assert.ok(
        p.errors?.some((e) => e.field.includes(field)),
        `${query}: ${JSON.stringify(p.errors)}`,
      );
    }
  });
});
