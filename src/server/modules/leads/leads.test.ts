// GET /api/leads/search and GET /api/leads/{id} over HTTP, on every engine: the row shape,
// every filter (a row that should match does, one that should not does not), each date_type,
// day boundaries in a time zone, masking by leads:contacts, attempts, 401/403 and validation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  type TestApp,
} from '../../../../test/helpers.js';
import { insertAttempt, insertLeads, insertLeadWorld, leadRow, type LeadInput } from '../../../../test/fixtures.js';

const at = (minutes: number) => new Date(Date.UTC(2026, 9, 1, 10) + minutes * 60_000).toISOString();
const get = (ta: TestApp, url: string, token = ta.ownerToken) => call(ta.app, token, { method: 'GET', url });

async function search(ta: TestApp, qs: string, token = ta.ownerToken) {
  const res = await get(ta, `/api/leads/search?${qs}`, token);
  assert.equal(res.statusCode, 200, `${qs}: ${res.body}`);
  return res.json() as { data: Record<string, any>[]; next_cursor: string | null };
}
const ids = async (ta: TestApp, qs: string, token?: string) =>
  (await search(ta, qs, token)).data.map((r) => r.id as string);

const STATUSES = ['new', 'pending', 'delivered', 'rejected', 'duplicate', 'failed'] as const;

forEachDatabase('Leads search and detail', (engine) => {
  test('a row carries the lead in full: names joined, money in units, is_ftd, autologin_url', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    const full: LeadInput = {
      traffic_provider_id: w.providerA,
      campaign_id: w.campaignA,
      flow_id: w.flow,
      partner_id: w.partnerA,
      created_at: at(0),
      first_name: 'Grace',
      last_name: 'Hopper',
      email: 'grace@example.com',
      phone: '+4915123456767',
      country: 'DE',
      ip: '198.51.100.4',
      language: 'de',
      funnel: 'crypto-1',
      sub_id1: 'a',
      sub_id2: 'b',
      sub_id3: 'c',
      sub_id4: 'd',
      sub_id5: 'e',
      status: 'delivered',
      reason: null,
      partner_lead_id: 'P-77',
      sale_status: 'FTD',
      autologin_url: 'https://broker.example/login?t=1',
      delivered_at: at(1),
      ftd_at: at(90),
      status_updated_at: at(90),
      cost_cents: 1250,
      revenue_cents: 60000,
    };
    const [fullId, bareId] = await insertLeads(ta.db, [
      full,
      { traffic_provider_id: w.providerB, created_at: at(-5), status: 'rejected', reason: 'no partner' },
    ]);
    const { data, next_cursor } = await search(ta, '');
    assert.equal(next_cursor, null);
    assert.deepEqual(
      data.map((r) => r.id),
      [fullId, bareId],
    );
    assert.deepEqual(data[0], {
      id: fullId,
      created_at: at(0),
      first_name: 'Grace',
      last_name: 'Hopper',
      email: 'grace@example.com',
      phone: '+4915123456767',
      country: 'DE',
      ip: '198.51.100.4',
      language: 'de',
      funnel: 'crypto-1',
      sub_id1: 'a',
      sub_id2: 'b',
      sub_id3: 'c',
      sub_id4: 'd',
      sub_id5: 'e',
      traffic_provider_id: w.providerA,
      traffic_provider_name: 'Provider A',
      campaign_id: w.campaignA,
      campaign_name: 'Campaign A',
      flow_id: w.flow,
      flow_name: 'Flow A',
      partner_id: w.partnerA,
      partner_name: 'Partner A',
      status: 'delivered',
      reason: null,
      partner_lead_id: 'P-77',
      sale_status: 'FTD',
      autologin_url: 'https://broker.example/login?t=1',
      delivered_at: at(1),
      ftd_at: at(90),
      is_ftd: true,
      status_updated_at: at(90),
      payout: 12.5,
      revenue: 600,
      flags: [],
      quality_score: null,
    });
    const bare = data[1];
    assert.equal(bare.traffic_provider_name, 'Provider B');
    for (const k of [
      'campaign_id',
      'campaign_name',
      'flow_id',
      'flow_name',
      'partner_id',
      'partner_name',
      'autologin_url',
      'delivered_at',
      'ftd_at',
      'sale_status',
    ]) {
      assert.equal(bare[k], null, k);
    }
    assert.deepEqual(
      [bare.status, bare.reason, bare.is_ftd, bare.payout, bare.revenue],
      ['rejected', 'no partner', false, 0, 0],
    );
    // The detail is the same record plus its attempts and its status history.
    const detail = await get(ta, `/api/leads/${fullId}`);
    assert.equal(detail.statusCode, 200);
    const { attempts, status_history, verdicts, autologin_opens, import_id, erased_at, ...rest } = detail.json();
    assert.equal(erased_at, null);
    assert.deepEqual(rest, data[0]);
    assert.equal(import_id, null, 'not imported (modules/imports)');
    assert.equal(autologin_opens, null, 'no tracked link');
    assert.deepEqual(attempts, []);
    assert.deepEqual(verdicts, [], 'no partner was passed over');
    assert.deepEqual(status_history, [], 'its FTD was written directly, not reported');
  });

  test('every filter: the rows that should match do, the others do not', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    const specs: LeadInput[] = Array.from({ length: 30 }, (_, i) => ({
      traffic_provider_id: i % 2 ? w.providerB : w.providerA,
      campaign_id: i % 3 === 0 ? null : i % 2 ? w.campaignB : w.campaignA,
      flow_id: i % 4 === 0 ? w.flow : null,
      partner_id: [null, w.partnerA, w.partnerB][i % 3],
      status: STATUSES[i % 6],
      country: ['DE', 'AT', 'CH', 'FR', 'GB'][i % 5],
      created_at: at(i),
      ftd_at: i % 4 === 1 ? at(500 + i) : null,
      sale_status: [null, 'Callback', 'FTD', 'No answer'][i % 4],
      first_name: ['Ada', 'Zelda', 'Bob', 'Ádám'][i % 4],
      last_name: `Quart${i}`,
      email: `person${i}@example.com`,
      phone: `+4915100000${String(i).padStart(3, '0')}`,
      sub_id1: i % 2 ? 'one' : null,
      sub_id2: `two-${i % 3}`,
      sub_id3: i % 5 ? 'three' : 'x',
      sub_id4: i === 7 ? 'four' : null,
      sub_id5: `five-${i % 2}`,
    }));
    const rows = specs.map(leadRow);
    await ta.db.insertInto('leads').values(rows).execute();
    const byNewest = [...rows].sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
    const r = (i: number) => rows[i];
    const cases: [string, (x: (typeof rows)[number]) => boolean][] = [
      ['status=rejected', (x) => x.status === 'rejected'],
      ['status=new&status=failed', (x) => x.status === 'new' || x.status === 'failed'],
      ['status=new,delivered', (x) => x.status === 'new' || x.status === 'delivered'],
      ['country=AT', (x) => x.country === 'AT'],
      ['country=AT,ch&country=GB', (x) => ['AT', 'CH', 'GB'].includes(x.country)],
      [`partner_id=${w.partnerA}`, (x) => x.partner_id === w.partnerA],
      [`traffic_provider_id=${w.providerB}`, (x) => x.traffic_provider_id === w.providerB],
      [`campaign_id=${w.campaignA}`, (x) => x.campaign_id === w.campaignA],
      [`flow_id=${w.flow}`, (x) => x.flow_id === w.flow],
      ['is_ftd=true', (x) => x.ftd_at != null],
      ['is_ftd=false', (x) => x.ftd_at == null],
      ['sale_status=FTD', (x) => x.sale_status === 'FTD'],
      ['sub_id1=one', (x) => x.sub_id1 === 'one'],
      ['sub_id2=two-1', (x) => x.sub_id2 === 'two-1'],
      ['sub_id3=x', (x) => x.sub_id3 === 'x'],
      ['sub_id4=four', (x) => x.sub_id4 === 'four'],
      ['sub_id5=five-0', (x) => x.sub_id5 === 'five-0'],
      [`q=${r(4).id}`, (x) => x.id === r(4).id],
      [`id=${r(3).id},${r(5).id.toUpperCase()}&id=${r(8).id}`, (x) => [r(3).id, r(5).id, r(8).id].includes(x.id)],
      [`id=${r(3).id},${r(6).id}&country=${r(3).country}`, (x) => x.id === r(3).id],
      ['q=zel', (x) => x.first_name === 'Zelda'],
      ['q=quart1', (x) => /^Quart1/.test(x.last_name!)],
      ['q=%20QUART2%20', (x) => /^Quart2/.test(x.last_name!)],
      ['q=Ada%20Quart2', (x) => x.first_name === 'Ada' && /^Quart2/.test(x.last_name!)],
      ['q=PERSON9@Example.com', (x) => x.email === 'person9@example.com'],
      ['q=%2B49%20151%2000000-011', (x) => x.phone === '+4915100000011'],
      ['q=0049151%2F00000011', () => false], // a slash is not phone notation: no match at all
      ['q=004915100000012', (x) => x.phone === '+4915100000012'],
      // Combined filters are ANDed.
      [
        `status=pending,delivered&country=AT,DE,CH&traffic_provider_id=${w.providerB}`,
        (x) =>
          ['pending', 'delivered'].includes(x.status) &&
          ['AT', 'DE', 'CH'].includes(x.country) &&
          x.traffic_provider_id === w.providerB,
      ],
      [
        `is_ftd=true&partner_id=${w.partnerA}&sub_id5=five-1`,
        (x) => x.ftd_at != null && x.partner_id === w.partnerA && x.sub_id5 === 'five-1',
      ],
    ];
    for (const [qs, pred] of cases) {
      const expected = byNewest.filter(pred).map((x) => x.id);
      if (!qs.includes('%2F'))
        assert.ok(expected.length > 0 && expected.length < rows.length, `${qs}: the case must both match and exclude`);
      assert.deepEqual(await ids(ta, `${qs}&limit=500`), expected, qs);
    }
    // Contacts match exactly, not as a part: no %contains% scan.
    assert.deepEqual(await ids(ta, 'q=example.com'), []);
    assert.deepEqual(await ids(ta, 'q=person9'), []);
    // Unknown references simply match nothing.
    assert.deepEqual(await ids(ta, 'partner_id=nope'), []);
    // A like-pattern in q is text, not a wildcard.
    assert.deepEqual(await ids(ta, 'q=Q_art'), []);
    assert.deepEqual(await ids(ta, 'q=%25'), []);
  });

  test('name search: a case-insensitive prefix of first or last name, common names and rare ones alike', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    const tp = w.providerA;
    // Over a thousand leads share a first name (on SQLite the search then walks the date index
    // instead of the name index); a few others are rare.
    const common = await insertLeads(
      ta.db,
      Array.from({ length: 1100 }, (_, i) => ({
        traffic_provider_id: tp,
        created_at: at(i),
        first_name: 'Maria',
        last_name: i % 2 ? 'Schmidt' : 'Rossi',
      })),
    );
    const [oz, ad, mar, hy] = await insertLeads(ta.db, [
      { traffic_provider_id: tp, created_at: at(5000), first_name: 'Mesut', last_name: 'Özil' },
      { traffic_provider_id: tp, created_at: at(5001), first_name: 'Ádám', last_name: 'Kovács' },
      { traffic_provider_id: tp, created_at: at(5002), first_name: 'Marianne', last_name: 'Maria-Lopez' },
      { traffic_provider_id: tp, created_at: at(5003), first_name: 'Jean-Luc', last_name: 'de la Cruz' },
    ]);
    const all = async (qs: string) => {
      const out: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await search(ta, `${qs}&limit=500${cursor ? `&cursor=${cursor}` : ''}`);
        out.push(...page.data.map((r) => r.id as string));
        cursor = page.next_cursor;
      } while (cursor);
      return out;
    };
    const newestFirst = (list: string[]) => [...list].reverse();
    assert.deepEqual(await all('q=maria'), [mar, ...newestFirst(common)]);
    assert.deepEqual(await all('q=MARIA%20schm'), newestFirst(common.filter((_, i) => i % 2)));
    assert.deepEqual(await all('q=mari'), [mar, ...newestFirst(common)]);
    assert.deepEqual(await ids(ta, 'q=Özil'), [oz]); // typed as stored: found on every engine
    assert.deepEqual(await ids(ta, 'q=Ádám'), [ad]);
    assert.deepEqual(await ids(ta, 'q=KOV'), [ad]);
    assert.deepEqual(await ids(ta, 'q=jean-l'), [hy]);
    assert.deepEqual(await ids(ta, 'q=de%20la%20c'), [hy]); // a last name with spaces
    assert.deepEqual(await ids(ta, 'q=Maria-'), [mar]);
    assert.deepEqual(await ids(ta, 'q=aria'), []); // a prefix, not a part
    assert.deepEqual(await ids(ta, 'q=Marianne%20Rossi'), []);
    // Combined with other filters.
    assert.deepEqual(await all(`q=maria&date_from=${at(1090)}`), [mar, ...newestFirst(common.slice(1090))]);
  });

  test('each date_type sorts by its date, newest first, leaves out rows without it, and takes the range', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    const tp = w.providerA;
    const [l1, l2, l3, l4] = await insertLeads(ta.db, [
      { traffic_provider_id: tp, created_at: at(0), delivered_at: at(50), ftd_at: null, status_updated_at: at(10) },
      { traffic_provider_id: tp, created_at: at(1), delivered_at: null, ftd_at: at(60), status_updated_at: at(5) },
      { traffic_provider_id: tp, created_at: at(2), delivered_at: at(40), ftd_at: at(70), status_updated_at: at(20) },
      { traffic_provider_id: tp, created_at: at(3), delivered_at: null, ftd_at: null, status_updated_at: at(1) },
    ]);
    assert.deepEqual(await ids(ta, ''), [l4, l3, l2, l1]);
    assert.deepEqual(await ids(ta, 'date_type=registration'), [l4, l3, l2, l1]);
    assert.deepEqual(await ids(ta, 'date_type=delivered'), [l1, l3]);
    assert.deepEqual(await ids(ta, 'date_type=ftd'), [l3, l2]);
    assert.deepEqual(await ids(ta, 'date_type=status_updated'), [l3, l1, l2, l4]);
    // The range applies to the chosen date; instants: from inclusive, to exclusive.
    assert.deepEqual(await ids(ta, `date_type=delivered&date_from=${at(45)}`), [l1]);
    assert.deepEqual(await ids(ta, `date_type=delivered&date_to=${at(50)}`), [l3]);
    assert.deepEqual(await ids(ta, `date_type=ftd&date_from=${at(60)}&date_to=${at(70)}`), [l2]);
    assert.deepEqual(await ids(ta, `date_type=status_updated&date_from=${at(5)}&date_to=${at(11)}`), [l1, l2]);
    assert.deepEqual(await ids(ta, `date_from=${at(1)}&date_to=${at(3)}`), [l3, l2]);
    // An offset is honoured: 12:01+02:00 is 10:01Z.
    assert.deepEqual(await ids(ta, `date_from=${encodeURIComponent('2026-10-01T12:01:00+02:00')}`), [l4, l3, l2]);
    // is_ftd with another date type.
    assert.deepEqual(await ids(ta, 'date_type=delivered&is_ftd=false'), [l1]);
    assert.deepEqual(await ids(ta, 'date_type=delivered&is_ftd=true'), [l3]);
    assert.deepEqual(await ids(ta, 'date_type=ftd&is_ftd=true'), [l3, l2]);
    assert.deepEqual(await ids(ta, 'date_type=ftd&is_ftd=false'), []);
  });

  test('days are whole days in the time zone: 23:30 UTC belongs to the next day in Europe/Berlin', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    const tp = w.providerA;
    const [a, b, c, d] = await insertLeads(ta.db, [
      { traffic_provider_id: tp, created_at: '2026-11-20T23:30:00.000Z' }, // Berlin: 21 Nov 00:30
      { traffic_provider_id: tp, created_at: '2026-11-21T22:59:59.999Z' }, // Berlin: 21 Nov 23:59:59.999
      { traffic_provider_id: tp, created_at: '2026-11-21T23:00:00.000Z' }, // Berlin: 22 Nov 00:00
      { traffic_provider_id: tp, created_at: '2026-11-20T22:59:59.999Z' }, // Berlin: 20 Nov 23:59:59.999
    ]);
    const day = 'date_from=2026-11-21&date_to=2026-11-21';
    assert.deepEqual(await ids(ta, `${day}&timezone=Europe/Berlin`), [b, a]);
    assert.deepEqual(await ids(ta, `${day}&timezone=UTC`), [c, b]);
    assert.deepEqual(await ids(ta, `date_from=2026-11-20&date_to=2026-11-21&timezone=Europe/Berlin`), [b, a, d]);
    assert.deepEqual(await ids(ta, `date_from=2026-11-22&timezone=Europe/Berlin`), [c]);
    assert.deepEqual(await ids(ta, `date_to=2026-11-20&timezone=Europe/Berlin`), [d]);
    assert.deepEqual(await ids(ta, `${day}&timezone=America/New_York`), [c, b]); // 21 Nov 05:00Z – 22 Nov 05:00Z
    // Without timezone, the operator's own: the owner's is UTC, until it is changed.
    assert.deepEqual(await ids(ta, day), [c, b]);
    await ta.db.updateTable('operators').set({ timezone: 'Europe/Berlin' }).where('id', '=', ta.ownerId).execute();
    assert.deepEqual(await ids(ta, day), [b, a]);
    // Also for an API key: it acts as its operator.
    const key = await newApiKey(ta, ['leads:view']);
    assert.deepEqual(await ids(ta, day, key.secret), [b, a]);
    // The other date types take days the same way.
    await ta.db.updateTable('leads').set({ delivered_at: '2026-11-20T23:30:00.000Z' }).where('id', '=', c).execute();
    assert.deepEqual(await ids(ta, `date_type=delivered&${day}`), [c]);
    assert.deepEqual(await ids(ta, `date_type=delivered&${day}&timezone=UTC`), []);
  });

  test('without leads:contacts email and phone are masked and cannot be searched; with it (session or key) they are shown', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    const [id] = await insertLeads(ta.db, [
      {
        traffic_provider_id: w.providerA,
        partner_id: w.partnerA,
        first_name: 'John',
        last_name: 'Doe',
        email: 'john.doe@example.com',
        phone: '+4915123456767',
      },
    ]);
    await insertAttempt(ta.db, {
      lead_id: id,
      partner_id: w.partnerA,
      attempt_no: 1,
      response_excerpt: '{"ok":true,"email":"JOHN.DOE@example.com","phone":"4915123456767","tel":"+4915123456767"}',
    });
    const viewer = await newOperator(ta, ['leads:view']);
    const reader = await newOperator(ta, ['leads:view', 'leads:contacts']);
    const viewKey = await newApiKey(ta, ['leads:view'], { token: reader.token });
    const fullKey = await newApiKey(ta, ['leads:view', 'leads:contacts'], { token: reader.token });

    const FULL = { email: 'john.doe@example.com', phone: '+4915123456767' };
    const MASKED = { email: 'j***@example.com', phone: '+49*********67' };
    async function contactsSeenBy(token: string) {
      const row = (await search(ta, '', token)).data[0];
      const detail = (await get(ta, `/api/leads/${id}`, token)).json();
      assert.deepEqual(
        { email: detail.email, phone: detail.phone },
        { email: row.email, phone: row.phone },
        'search and detail agree',
      );
      return { seen: { email: row.email, phone: row.phone }, excerpt: detail.attempts[0].response_excerpt as string };
    }
    for (const token of [ta.ownerToken, reader.token, fullKey.secret]) {
      const { seen, excerpt } = await contactsSeenBy(token);
      assert.deepEqual(seen, FULL);
      assert.ok(excerpt.includes('JOHN.DOE@example.com') && excerpt.includes('"4915123456767"'));
    }
    for (const token of [viewer.token, viewKey.secret]) {
      const { seen, excerpt } = await contactsSeenBy(token);
      assert.deepEqual(seen, MASKED);
      assert.equal(excerpt, '{"ok":true,"email":"j***@example.com","phone":"49*********67","tel":"+49*********67"}');
    }
    // Searching by a contact needs leads:contacts too (refused without it: contact-search.test.ts); by name it does not.
    for (const q of ['john.doe@example.com', '+4915123456767']) {
      assert.deepEqual(await ids(ta, `q=${encodeURIComponent(q)}`, fullKey.secret), [id]);
      for (const token of [viewer.token, viewKey.secret])
        assert.equal((await get(ta, `/api/leads/search?q=${encodeURIComponent(q)}`, token)).statusCode, 400);
    }
    assert.deepEqual(await ids(ta, 'q=john%20doe', viewer.token), [id]);
    // A key's rights are its scopes ∩ its operator's role now: take leads:contacts from the role
    // and the full key masks on its very next request.
    const patch = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/roles/${reader.roleId}`,
      payload: { permissions: ['leads:view'] },
    });
    assert.equal(patch.statusCode, 200, patch.body);
    assert.deepEqual((await contactsSeenBy(fullKey.secret)).seen, MASKED);
    assert.deepEqual((await contactsSeenBy(reader.token)).seen, MASKED);
    assert.equal((await get(ta, '/api/leads/search?q=john.doe%40example.com', fullKey.secret)).statusCode, 400);
  });

  test('sale statuses in use: distinct, sorted, contacts masked without leads:contacts', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    const lead = (sale_status: string | null) => ({ traffic_provider_id: w.providerA, sale_status });
    await insertLeads(ta.db, [
      lead('No answer'),
      lead('FTD'),
      lead('No answer'),
      lead(null),
      lead('Call back ada@example.com'),
    ]);
    const res = await get(ta, '/api/leads/sale-statuses');
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { data: ['Call back ada@example.com', 'FTD', 'No answer'], complete: true });
    const viewer = await newOperator(ta, ['leads:view']);
    const masked = (await get(ta, '/api/leads/sale-statuses', viewer.token)).json();
    assert.equal(masked.data.length, 3);
    assert.ok(!masked.data.some((v: string) => v.includes('ada@example.com')), JSON.stringify(masked));
    assert.deepEqual(masked.data.slice(1), ['FTD', 'No answer']);
    await insertLeads(
      ta.db,
      Array.from({ length: 500 }, (_, i) => lead(`S${String(i).padStart(3, '0')}`)),
    );
    const many = (await get(ta, '/api/leads/sale-statuses')).json();
    assert.equal(many.data.length, 500);
    assert.equal(many.complete, false);
    assert.equal(many.data[0], 'Call back ada@example.com');
  });

  test('the detail lists the delivery attempts in order, with partner names; unknown ids are 404', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    const [id, other] = await insertLeads(ta.db, [
      {
        traffic_provider_id: w.providerA,
        partner_id: w.partnerB,
        status: 'delivered',
        autologin_url: 'https://b.example/in',
      },
      { traffic_provider_id: w.providerA },
    ]);
    // Written out of order: the answer is ordered by attempt number.
    await insertAttempt(ta.db, {
      lead_id: id,
      partner_id: w.partnerB,
      attempt_no: 2,
      requested_at: at(2),
      duration_ms: 340,
      http_status: 200,
      outcome: 'accepted',
      response_excerpt: '{"url":"https://b.example/in"}',
    });
    await insertAttempt(ta.db, {
      lead_id: id,
      partner_id: w.partnerA,
      attempt_no: 1,
      requested_at: at(1),
      duration_ms: 5000,
      http_status: null,
      outcome: 'timeout',
      reason: 'no answer in 5000 ms',
      response_excerpt: null,
    });
    await insertAttempt(ta.db, {
      lead_id: other,
      partner_id: w.partnerA,
      attempt_no: 1,
      outcome: 'rejected',
      http_status: 400,
    });
    const res = await get(ta, `/api/leads/${id}`);
    assert.equal(res.statusCode, 200);
    const lead = res.json();
    assert.equal(lead.autologin_url, 'https://b.example/in');
    assert.equal(lead.partner_name, 'Partner B');
    assert.deepEqual(lead.attempts, [
      {
        attempt_no: 1,
        partner_id: w.partnerA,
        partner_name: 'Partner A',
        requested_at: at(1),
        duration_ms: 5000,
        http_status: null,
        outcome: 'timeout',
        reason: 'no answer in 5000 ms',
        response_excerpt: null,
        injection_id: null,
      },
      {
        attempt_no: 2,
        partner_id: w.partnerB,
        partner_name: 'Partner B',
        requested_at: at(2),
        duration_ms: 340,
        http_status: 200,
        outcome: 'accepted',
        reason: null,
        response_excerpt: '{"url":"https://b.example/in"}',
        injection_id: null,
      },
    ]);
    expectProblem(await get(ta, '/api/leads/01900000-0000-7000-8000-000000000000'), 404, 'not_found');
    expectProblem(await get(ta, '/api/leads/no-such-lead'), 404, 'not_found');
  });

  test('401 without a credential, 403 without leads:view (role or key scope)', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    const [id] = await insertLeads(ta.db, [{ traffic_provider_id: w.providerA }]);
    const urls = ['/api/leads/search', '/api/leads/export', `/api/leads/${id}`];
    const other = await newOperator(ta, ['roles:view', 'leads:contacts']);
    const key = await newApiKey(ta, ['roles:view', 'analytics:view']);
    const viewer = await newOperator(ta, ['leads:view']);
    const viewerKey = await newApiKey(ta, ['leads:view'], { token: viewer.token });
    for (const url of urls) {
      const res = await ta.app.inject({ method: 'GET', url });
      expectProblem(res, 401, 'unauthorized');
      assert.match(String(res.headers['www-authenticate']), /^Bearer/);
      expectProblem(await get(ta, url, other.token), 403, 'forbidden');
      expectProblem(await get(ta, url, key.secret), 403, 'insufficient_scope');
      assert.equal((await get(ta, url, viewer.token)).statusCode, 200, url);
      assert.equal((await get(ta, url, viewerKey.secret)).statusCode, 200, url);
    }
  });

  test('bad parameters are 400 validation_failed naming each one', async (t) => {
    const ta = await buildTestApp(t, engine);
    const fields = async (url: string) =>
      expectProblem(await get(ta, url), 400, 'validation_failed')
        .errors!.map((e) => e.field)
        .sort();
    const cases: [string, string[]][] = [
      ['limit=0', ['limit']],
      ['limit=501', ['limit']],
      ['limit=ten', ['limit']],
      ['date_type=created', ['date_type']],
      ['date_from=yesterday', ['date_from']],
      ['date_from=2026-02-30', ['date_from']],
      ['date_to=2026-13-01', ['date_to']],
      ['date_to=2026-11-21T10:00:00', ['date_to']], // a date-time needs Z or an offset
      ['date_from=2026-11-22&date_to=2026-11-21', ['date_from']],
      ['date_from=2026-11-21T10:00:01Z&date_to=2026-11-21T10:00:00Z', ['date_from']],
      ['date_from=2026-11-22T00:00:00Z&date_to=2026-11-21&timezone=UTC', ['date_from']],
      ['timezone=Mars/Olympus', ['timezone']],
      ['timezone=Mars/Olympus&date_from=2026-11-21', ['timezone']],
      ['status=new,sold', ['status']],
      ['status=new&status=won', ['status']],
      ['country=DEU', ['country']],
      ['country=de,1x', ['country']],
      ['is_ftd=maybe', ['is_ftd']],
      ['sub_id1=', ['sub_id1']],
      ['q=', ['q']],
      ['colour=red', ['colour']],
      ['cursor=not-a-cursor', ['cursor']],
      ['id=42', ['id']],
      [
        `id=${Array.from({ length: 201 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`).join(',')}`,
        ['id'],
      ],
      ['status=bad&country=bad&date_from=bad&timezone=bad', ['country', 'date_from', 'status', 'timezone']],
    ];
    for (const [qs, expected] of cases) assert.deepEqual(await fields(`/api/leads/search?${qs}`), expected, qs);
    // A cursor only continues the date_type it was made for.
    const w = await insertLeadWorld(ta.db);
    await insertLeads(
      ta.db,
      [0, 1, 2].map((i) => ({ traffic_provider_id: w.providerA, created_at: at(i), delivered_at: at(i) })),
    );
    const { next_cursor } = await search(ta, 'limit=1');
    assert.ok(next_cursor);
    assert.deepEqual(await fields(`/api/leads/search?limit=1&date_type=delivered&cursor=${next_cursor}`), ['cursor']);
    // The export takes the filters, and no paging.
    assert.deepEqual(await fields('/api/leads/export?limit=10'), ['limit']);
    assert.deepEqual(await fields('/api/leads/export?status=sold&date_to=x'), ['date_to', 'status']);
  });
});
