import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  insertCampaign,
  insertFlow,
  insertLeads,
  insertPartner,
  insertTrafficProvider,
} from '../../../../test/fixtures.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  type TestApp,
} from '../../../../test/helpers.js';

const post = (ta: TestApp, payload: unknown, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'POST', url: '/api/flows', payload: payload as object });
const patch = (ta: TestApp, id: string, payload: unknown, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'PATCH', url: `/api/flows/${id}`, payload: payload as object });
const get = (ta: TestApp, url: string, token = ta.ownerToken) => call(ta.app, token, { method: 'GET', url });
const del = (ta: TestApp, id: string, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'DELETE', url: `/api/flows/${id}` });

/** The fields a 400 names, sorted. */
const fieldsOf = (res: Awaited<ReturnType<typeof get>>) =>
  expectProblem(res, 400, 'validation_failed')
    .errors!.map((e) => e.field)
    .sort();

const targetRows = (ta: TestApp, flowId?: string) => {
  let q = ta.db.selectFrom('flow_targets').selectAll().orderBy('flow_id').orderBy('position');
  if (flowId) q = q.where('flow_id', '=', flowId);
  return q.execute();
};

const auditOf = async (ta: TestApp, action: string, targetId: string) =>
  (
    await ta.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', action)
      .where('target_id', '=', targetId)
      .execute()
  ).map((r) => ({
    ...r,
    details: JSON.parse(r.details),
  }));

const archivePartner = (ta: TestApp, id: string) =>
  ta.db.updateTable('partners').set({ archived_at: new Date().toISOString() }).where('id', '=', id).execute();

const BERLIN = { timezone: 'Europe/Berlin', days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' };

/** A target's caps beside its daily cap, when none are set. */
const NO_CAPS = { hourly_cap: null, total_cap: null, country_caps: {}, cap_counts: 'deliveries' };

forEachDatabase('Flows', (engine) => {
  test('create keeps targets in the given order, fills defaults, and GET and the list answer the same flow with partner names', async (t) => {
    const ta = await buildTestApp(t, engine);
    const [a, b, c] = [
      await insertPartner(ta.db, { name: 'Alpha' }),
      await insertPartner(ta.db, { name: 'Bravo' }),
      await insertPartner(ta.db, { name: 'Charlie' }),
    ];
    const res = await post(ta, {
      name: '  DE main  ',
      targets: [
        { partner_id: c, priority: 5, weight: 30, daily_cap: 40, countries: ['DE', 'AT'], schedule: BERLIN },
        { partner_id: a, priority: 1 },
        { partner_id: b, priority: 3, weight: 70, daily_cap: 0 },
      ],
    });
    assert.equal(res.statusCode, 201, res.body);
    const flow = res.json();
    assert.deepEqual(Object.keys(flow).sort(), [
      'archived_at',
      'created_at',
      'id',
      'max_attempts',
      'name',
      'review',
      'status',
      'targets',
      'updated_at',
    ]);
    assert.equal(flow.name, 'DE main');
    assert.equal(flow.status, 'active');
    assert.equal(flow.max_attempts, 3);
    assert.equal(flow.archived_at, null);
    assert.equal(flow.created_at, flow.updated_at);
    // Order as given, not sorted by priority.
    assert.deepEqual(
      flow.targets.map(({ id, ...rest }: { id: string }) => (assert.equal(typeof id, 'string'), rest)),
      [
        {
          partner_id: c,
          partner_name: 'Charlie',
          priority: 5,
          weight: 30,
          daily_cap: 40,
          ...NO_CAPS,
          countries: ['DE', 'AT'],
          schedule: BERLIN,
        },
        {
          partner_id: a,
          partner_name: 'Alpha',
          priority: 1,
          weight: 100,
          daily_cap: null,
          ...NO_CAPS,
          countries: [],
          schedule: null,
        },
        {
          partner_id: b,
          partner_name: 'Bravo',
          priority: 3,
          weight: 70,
          daily_cap: 0,
          ...NO_CAPS,
          countries: [],
          schedule: null,
        },
      ],
    );
    const rows = await targetRows(ta, flow.id);
    assert.deepEqual(
      rows.map((r) => [r.partner_id, r.position, r.id]),
      flow.targets.map((x: { partner_id: string; id: string }, i: number) => [x.partner_id, i, x.id]),
    );

    const one = await get(ta, `/api/flows/${flow.id}`);
    assert.equal(one.statusCode, 200);
    assert.deepEqual(one.json(), flow);
    const list = await get(ta, '/api/flows');
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json(), { data: [flow], next_cursor: null });

    const paused = await post(ta, { name: 'Empty', status: 'paused', max_attempts: 10 });
    assert.equal(paused.statusCode, 201, paused.body);
    assert.deepEqual([paused.json().status, paused.json().max_attempts, paused.json().targets], ['paused', 10, []]);

    const [entry] = await auditOf(ta, 'flow.created', flow.id);
    assert.equal(entry.actor_id, ta.ownerId);
    assert.deepEqual(entry.details, {
      name: 'DE main',
      status: 'active',
      max_attempts: 3,
      review: { hold_flags: [], min_score: null },
      targets: [
        { partner_id: c, priority: 5, weight: 30, daily_cap: 40, ...NO_CAPS },
        { partner_id: a, priority: 1, weight: 100, daily_cap: null, ...NO_CAPS },
        { partner_id: b, priority: 3, weight: 70, daily_cap: 0, ...NO_CAPS },
      ],
    });
  });

  test('PATCH with targets replaces the whole list atomically: one bad target changes nothing', async (t) => {
    const ta = await buildTestApp(t, engine);
    const [a, b, c] = [
      await insertPartner(ta.db),
      await insertPartner(ta.db),
      await insertPartner(ta.db, { name: 'Charlie' }),
    ];
    const created = (
      await post(ta, {
        name: 'F',
        targets: [
          { partner_id: a, priority: 1 },
          { partner_id: b, priority: 2, weight: 5 },
        ],
      })
    ).json();
    const before = await targetRows(ta);
    const flowBefore = await ta.db
      .selectFrom('flows')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();

    // The second target names a partner that does not exist: 400, and neither the name nor
    // the targets change.
    const bad = await patch(ta, created.id, {
      name: 'Renamed',
      targets: [
        { partner_id: c, priority: 1 },
        { partner_id: 'no-such-partner', priority: 2 },
      ],
    });
    assert.deepEqual(fieldsOf(bad), ['targets[1].partner_id']);
    assert.deepEqual(await targetRows(ta), before);
    assert.deepEqual(
      await ta.db.selectFrom('flows').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow(),
      flowBefore,
    );
    // A schema error inside the list: the same.
    assert.deepEqual(
      fieldsOf(
        await patch(ta, created.id, {
          targets: [
            { partner_id: c, priority: 1 },
            { partner_id: a, priority: 1, weight: 0 },
          ],
        }),
      ),
      ['targets[1].weight'],
    );
    assert.deepEqual(await targetRows(ta), before);
    assert.equal((await auditOf(ta, 'flow.updated', created.id)).length, 0);

    // A good list replaces the old one: b stays (same target id, new settings), a goes, c comes.
    const ok = await patch(ta, created.id, {
      targets: [
        { partner_id: c, priority: 1, countries: ['FR'] },
        { partner_id: b, priority: 7 },
      ],
    });
    assert.equal(ok.statusCode, 200, ok.body);
    const flow = ok.json();
    assert.equal(flow.name, 'F');
    assert.ok(flow.updated_at >= created.updated_at);
    assert.deepEqual(
      flow.targets.map((x: any) => [
        x.partner_id,
        x.partner_name === 'Charlie' || x.partner_id === b,
        x.priority,
        x.weight,
        x.countries,
      ]),
      [
        [c, true, 1, 100, ['FR']],
        [b, true, 7, 100, []],
      ],
    );
    assert.equal(flow.targets[1].id, created.targets[1].id, 'a partner that stays keeps its target id');
    const after = await targetRows(ta);
    assert.deepEqual(
      after.map((r) => [r.partner_id, r.position, r.priority]),
      [
        [c, 0, 1],
        [b, 1, 7],
      ],
    );
    const [entry] = await auditOf(ta, 'flow.updated', created.id);
    assert.deepEqual(entry.details.before.targets, [
      { partner_id: a, priority: 1, weight: 100, daily_cap: null, ...NO_CAPS },
      { partner_id: b, priority: 2, weight: 5, daily_cap: null, ...NO_CAPS },
    ]);
    assert.deepEqual(entry.details.after.targets, [
      { partner_id: c, priority: 1, weight: 100, daily_cap: null, ...NO_CAPS },
      { partner_id: b, priority: 7, weight: 100, daily_cap: null, ...NO_CAPS },
    ]);

    // Without `targets` the list is left alone; with [] it is emptied.
    const renamed = await patch(ta, created.id, { name: 'G', status: 'paused', max_attempts: 1 });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.deepEqual([renamed.json().name, renamed.json().status, renamed.json().max_attempts], ['G', 'paused', 1]);
    assert.deepEqual(renamed.json().targets, flow.targets);
    const rename = (await auditOf(ta, 'flow.updated', created.id)).find((e) => e.details.after.name === 'G')!;
    assert.deepEqual(rename.details.before, { name: 'F', status: 'active', max_attempts: 3 });
    const emptied = await patch(ta, created.id, { targets: [] });
    assert.deepEqual(emptied.json().targets, []);
    assert.deepEqual(await targetRows(ta), []);
  });

  test('concurrent PATCHes of the targets never mix: the list ends as exactly one of them', async (t) => {
    const ta = await buildTestApp(t, engine);
    const partners: string[] = [];
    for (let i = 0; i < 12; i++) partners.push(await insertPartner(ta.db));
    const flow = (await post(ta, { name: 'Race', targets: [{ partner_id: partners[0], priority: 1 }] })).json();
    const lists = Array.from({ length: 6 }, (_, k) =>
      [partners[2 * k], partners[2 * k + 1]].map((partner_id, i) => ({ partner_id, priority: i + 1 })),
    );
    const answers = await Promise.all(lists.map((targets) => patch(ta, flow.id, { targets })));
    for (const res of answers) assert.equal(res.statusCode, 200, res.body);
    const rows = await targetRows(ta, flow.id);
    assert.ok(
      lists.some((l) => JSON.stringify(l.map((x) => x.partner_id)) === JSON.stringify(rows.map((r) => r.partner_id))),
      `targets mixed: ${JSON.stringify(rows.map((r) => r.partner_id))}`,
    );
    assert.deepEqual(
      rows.map((r) => r.position),
      [0, 1],
    );
    assert.equal((await auditOf(ta, 'flow.updated', flow.id)).length, lists.length);
  });

  test('400 names each bad field in one answer: schema rules, time zones, repeats and partner references', async (t) => {
    const ta = await buildTestApp(t, engine);
    const [a, b, archived] = [await insertPartner(ta.db), await insertPartner(ta.db), await insertPartner(ta.db)];
    await archivePartner(ta, archived);

    const schemaBad = await post(ta, {
      name: ' ',
      max_attempts: 11,
      colour: 'red',
      targets: [
        { partner_id: a, priority: 0 },
        { partner_id: b, priority: 1, weight: 0 },
        { partner_id: a, priority: 1001, countries: ['de'] },
        { partner_id: a, priority: 1, countries: ['XX'], daily_cap: -1 }, // well-formed, not an assigned code
        { partner_id: a, priority: 1, weight: 10_001, schedule: { ...BERLIN, from: '25:00' }, extra: true },
        { priority: 1.5 },
      ],
    });
    // Whether the nullable schedule as a whole is named too, beside schedule.from, is the error
    // mapper's business; the bad nested field must be named.
    assert.deepEqual(
      fieldsOf(schemaBad).filter((f) => f !== 'targets[4].schedule'),
      [
        'colour',
        'max_attempts',
        'name',
        'targets[0].priority',
        'targets[1].weight',
        'targets[2].countries[0]',
        'targets[2].partner_id', // a repeat of targets[0]'s partner: found in the same answer
        'targets[2].priority',
        'targets[3].countries[0]',
        'targets[3].daily_cap',
        'targets[3].partner_id',
        'targets[4].extra',
        'targets[4].partner_id',
        'targets[4].schedule.from',
        'targets[4].weight',
        'targets[5].partner_id',
        'targets[5].priority',
      ],
    );
    const tooMany = Array.from({ length: 51 }, () => ({ partner_id: a, priority: 1 }));
    assert.ok(fieldsOf(await post(ta, { name: 'x', targets: tooMany })).includes('targets'));
    assert.deepEqual(fieldsOf(await post(ta, { targets: [] })), ['name']);

    // Rules the schema cannot express, all in one answer.
    const refsBad = await post(ta, {
      name: 'x',
      targets: [
        { partner_id: a, priority: 1, schedule: { ...BERLIN, timezone: 'Mars/Phobos' } },
        { partner_id: b, priority: 1 },
        { partner_id: a, priority: 2 },
        { partner_id: 'no-such-partner', priority: 1 },
        { partner_id: archived, priority: 1 },
      ],
    });
    const problem = expectProblem(refsBad, 400, 'validation_failed');
    assert.deepEqual(problem.errors!.map((e) => e.field).sort(), [
      'targets[0].schedule.timezone',
      'targets[2].partner_id',
      'targets[3].partner_id',
      'targets[4].partner_id',
    ]);
    const msg = Object.fromEntries(problem.errors!.map((e) => [e.field, e.message]));
    assert.match(msg['targets[2].partner_id'], /repeats the partner of targets\[0\]/);
    assert.match(msg['targets[3].partner_id'], /no partner/);
    assert.match(msg['targets[4].partner_id'], /archived/);

    assert.deepEqual(await ta.db.selectFrom('flows').select('id').execute(), [], 'nothing stored');
    assert.deepEqual(await targetRows(ta), []);

    // PATCH: an empty body and unknown fields are refused too.
    const flow = (await post(ta, { name: 'ok', targets: [{ partner_id: a, priority: 1 }] })).json();
    assert.deepEqual(fieldsOf(await patch(ta, flow.id, {})), ['body']);
    assert.deepEqual(fieldsOf(await patch(ta, flow.id, { id: 'x', created_at: 'x' })), ['created_at', 'id']);
    assert.deepEqual(fieldsOf(await patch(ta, flow.id, { targets: [{ partner_id: archived, priority: 1 }] })), [
      'targets[0].partner_id',
    ]);
    // Archiving is refused only as a new reference: a partner the flow already routes to may stay.
    await archivePartner(ta, a);
    const kept = await patch(ta, flow.id, { targets: [{ partner_id: a, priority: 9 }] });
    assert.equal(kept.statusCode, 200, kept.body);
    assert.equal(kept.json().targets[0].priority, 9);
  });

  test('who may read and change flows: 401, 403 insufficient_scope for keys, 403 forbidden for roles', async (t) => {
    const ta = await buildTestApp(t, engine);
    const p = await insertPartner(ta.db);
    const flowId = await insertFlow(ta.db, [p]);
    const body = { name: 'n', targets: [{ partner_id: p, priority: 1 }] };
    const writes = (token: string) => [
      post(ta, body, token),
      patch(ta, flowId, { name: 'x' }, token),
      del(ta, flowId, token),
    ];

    for (const res of [
      await get(ta, '/api/flows', ''),
      await get(ta, `/api/flows/${flowId}`, ''),
      ...(await Promise.all(writes(''))),
    ]) {
      expectProblem(res, 401, 'unauthorized');
    }
    // A key without the flows scopes, though its operator holds them.
    const other = await newApiKey(ta, ['campaigns:view', 'campaigns:edit']);
    expectProblem(await get(ta, '/api/flows', other.secret), 403, 'insufficient_scope');
    expectProblem(await get(ta, `/api/flows/${flowId}`, other.secret), 403, 'insufficient_scope');
    // A view key reads, and every write is refused.
    const viewKey = await newApiKey(ta, ['flows:view']);
    assert.equal((await get(ta, '/api/flows', viewKey.secret)).statusCode, 200);
    assert.equal((await get(ta, `/api/flows/${flowId}`, viewKey.secret)).statusCode, 200);
    for (const res of await Promise.all(writes(viewKey.secret))) expectProblem(res, 403, 'insufficient_scope');
    // Roles: without flows:view nothing; with only flows:view no writes.
    const outsider = await newOperator(ta, ['campaigns:view']);
    expectProblem(await get(ta, '/api/flows', outsider.token), 403, 'forbidden');
    const viewer = await newOperator(ta, ['flows:view']);
    assert.equal((await get(ta, '/api/flows', viewer.token)).statusCode, 200);
    for (const res of await Promise.all(writes(viewer.token))) expectProblem(res, 403, 'forbidden');
    // Nothing changed on the way.
    assert.equal(
      (await ta.db.selectFrom('flows').select('name').executeTakeFirstOrThrow()).name.startsWith('Flow'),
      true,
    );
    assert.equal((await ta.db.selectFrom('flows').select('id').execute()).length, 1);

    // An edit key works, and the audit names the key's operator and the channel.
    const editKey = await newApiKey(ta, ['flows:view', 'flows:edit']);
    const made = await post(ta, body, editKey.secret);
    assert.equal(made.statusCode, 201, made.body);
    const [entry] = await auditOf(ta, 'flow.created', made.json().id);
    assert.deepEqual([entry.actor_id, entry.via], [ta.ownerId, 'api_key']);
  });

  test('404 for a flow that does not exist', async (t) => {
    const ta = await buildTestApp(t, engine);
    for (const res of [
      await get(ta, '/api/flows/nope'),
      await patch(ta, 'nope', { name: 'x' }),
      await del(ta, 'nope'),
    ]) {
      expectProblem(res, 404, 'not_found');
    }
  });

  test('DELETE: 409 while a live campaign routes through it, archived while leads refer to it, deleted otherwise', async (t) => {
    const ta = await buildTestApp(t, engine);
    const p = await insertPartner(ta.db);
    const provider = await insertTrafficProvider(ta.db);
    const used = await insertFlow(ta.db, [p], { name: 'Used' });
    const campaign = await insertCampaign(ta.db, provider, used, { name: 'Spring DE' });

    const inUse = expectProblem(await del(ta, used), 409, 'conflict');
    assert.match(inUse.detail, /Spring DE/);
    assert.ok(inUse.detail.includes(campaign));
    assert.ok(
      await ta.db
        .selectFrom('flows')
        .select('id')
        .where('id', '=', used)
        .where('archived_at', 'is', null)
        .executeTakeFirst(),
    );

    // The campaign is archived and leads went through the flow: the flow is archived, not deleted.
    await ta.db
      .updateTable('campaigns')
      .set({ archived_at: new Date().toISOString() })
      .where('id', '=', campaign)
      .execute();
    await insertLeads(ta.db, [{ traffic_provider_id: provider, campaign_id: campaign, flow_id: used }]);
    const targetsBefore = await targetRows(ta, used);
    assert.equal((await del(ta, used)).statusCode, 204);
    const archived = await get(ta, `/api/flows/${used}`);
    assert.equal(archived.statusCode, 200);
    assert.ok(archived.json().archived_at);
    assert.equal(archived.json().targets.length, 1, 'an archived flow keeps its targets for the record');
    assert.deepEqual(await targetRows(ta, used), targetsBefore);
    assert.equal((await auditOf(ta, 'flow.archived', used)).length, 1);
    assert.equal((await auditOf(ta, 'flow.archived', used))[0].details.name, 'Used');
    // Hidden from the list unless asked for; closed to changes; deleting again changes nothing.
    assert.deepEqual((await get(ta, '/api/flows')).json().data, []);
    assert.deepEqual(
      (await get(ta, '/api/flows?include_archived=true')).json().data.map((f: { id: string }) => f.id),
      [used],
    );
    expectProblem(await patch(ta, used, { name: 'again' }), 409, 'conflict');
    assert.equal((await del(ta, used)).statusCode, 204);
    assert.equal((await auditOf(ta, 'flow.archived', used)).length, 1);
    assert.equal((await get(ta, `/api/flows/${used}`)).json().name, 'Used');

    // Only an archived campaign (no lead) still points at it: archived too, since the campaign keeps its history.
    const historic = await insertFlow(ta.db, [p]);
    const oldCampaign = await insertCampaign(ta.db, provider, historic);
    await ta.db
      .updateTable('campaigns')
      .set({ archived_at: new Date().toISOString() })
      .where('id', '=', oldCampaign)
      .execute();
    assert.equal((await del(ta, historic)).statusCode, 204);
    assert.ok((await get(ta, `/api/flows/${historic}`)).json().archived_at);

    // Nothing refers to it: the flow and its targets are gone.
    const unused = await insertFlow(ta.db, [p, await insertPartner(ta.db)], { name: 'Unused' });
    assert.equal((await del(ta, unused)).statusCode, 204);
    expectProblem(await get(ta, `/api/flows/${unused}`), 404, 'not_found');
    assert.deepEqual(await targetRows(ta, unused), []);
    const [entry] = await auditOf(ta, 'flow.deleted', unused);
    assert.equal(entry.details.name, 'Unused');
    assert.equal(entry.details.targets.length, 2);
  });

  test('list filters status, q, partner_id and include_archived; paging visits every flow exactly once', async (t) => {
    const ta = await buildTestApp(t, engine);
    const [a, b] = [await insertPartner(ta.db), await insertPartner(ta.db)];
    const alpha = await insertFlow(ta.db, [a], { name: 'Alpha 100%' });
    const beta = await insertFlow(ta.db, [b], { name: 'Beta' });
    const both = await insertFlow(ta.db, [b, a], { name: 'ALPHA_two' });
    const none = await insertFlow(ta.db, [], { name: 'Gamma' });
    await ta.db.updateTable('flows').set({ status: 'paused' }).where('id', '=', beta).execute();
    const gone = await insertFlow(ta.db, [a], { name: 'Alpha archived' });
    await ta.db.updateTable('flows').set({ archived_at: new Date().toISOString() }).where('id', '=', gone).execute();

    const ids = async (query: string) => {
      const res = await get(ta, `/api/flows?${query}`);
      assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
      return res.json().data.map((f: { id: string }) => f.id);
    };
    assert.deepEqual(await ids(''), [alpha, beta, both, none]);
    assert.deepEqual(await ids('status=paused'), [beta]);
    assert.deepEqual(await ids('status=active'), [alpha, both, none]);
    assert.deepEqual(await ids('q=alpha'), [alpha, both]);
    assert.deepEqual(await ids('q=%25'), [alpha], 'a % in q is a literal %');
    assert.deepEqual(await ids('q=a_1'), [], 'a _ in q is a literal _');
    assert.deepEqual(await ids('q=a_t'), [both]);
    assert.deepEqual(await ids(`partner_id=${a}`), [alpha, both]);
    assert.deepEqual(await ids(`partner_id=${b}&status=active`), [both]);
    assert.deepEqual(await ids('partner_id=no-such-partner'), []);
    assert.deepEqual(await ids('include_archived=true'), [alpha, beta, both, none, gone]);
    assert.deepEqual(await ids(`include_archived=true&q=archived&partner_id=${a}`), [gone]);
    // The list carries each flow's targets, in order.
    const listed = (await get(ta, `/api/flows?partner_id=${a}`)).json().data[1];
    assert.deepEqual(
      listed.targets.map((x: { partner_id: string }) => x.partner_id),
      [b, a],
    );

    // Pages of 2 over 5 flows: each exactly once, in id order, and the last page says so.
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(ta, `/api/flows?include_archived=true&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(res.statusCode, 200);
      seen.push(...res.json().data.map((f: { id: string }) => f.id));
      cursor = res.json().next_cursor;
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.deepEqual(seen, [alpha, beta, both, none, gone]);
    assert.deepEqual(fieldsOf(await get(ta, '/api/flows?limit=0')), ['limit']);
    assert.deepEqual(fieldsOf(await get(ta, '/api/flows?limit=501')), ['limit']);
    assert.deepEqual(fieldsOf(await get(ta, '/api/flows?cursor=nonsense')), ['cursor']);
    assert.deepEqual(fieldsOf(await get(ta, '/api/flows?status=archived')), ['status']);
    assert.deepEqual(fieldsOf(await get(ta, '/api/flows?colour=red')), ['colour']);
  });

  test('caps the way operators write them: hourly, total, per country, counted on FTDs; contradictions named at their field', async (t) => {
    const ta = await buildTestApp(t, engine);
    const [a, b] = [await insertPartner(ta.db), await insertPartner(ta.db)];
    const broker = {
      partner_id: a,
      priority: 1,
      daily_cap: 70,
      hourly_cap: 10,
      total_cap: 1000,
      country_caps: { DE: 50, AT: 20 },
      countries: ['DE', 'AT'],
      schedule: { ...BERLIN, from: '00:00', to: '00:00' },
    };
    const made = await post(ta, {
      name: 'Broker X',
      targets: [broker, { partner_id: b, priority: 2, cap_counts: 'ftds', daily_cap: 5 }],
    });
    assert.equal(made.statusCode, 201, made.body);
    const [x, y] = made.json().targets;
    assert.deepEqual(
      [x.daily_cap, x.hourly_cap, x.total_cap, x.country_caps, x.cap_counts],
      [70, 10, 1000, { DE: 50, AT: 20 }, 'deliveries'],
    );
    assert.deepEqual(
      [y.daily_cap, y.hourly_cap, y.total_cap, y.country_caps, y.cap_counts],
      [5, null, null, {}, 'ftds'],
    );
    assert.deepEqual((await get(ta, `/api/flows/${made.json().id}`)).json().targets, made.json().targets);

    const bad = await post(ta, {
      name: 'Bad',
      targets: [
        { ...broker, hourly_cap: 71, total_cap: 69, country_caps: { DE: 5, FR: 5, UK: 5 } }, // FR not taken here; UK is GB
        { partner_id: b, priority: 1, country_caps: { de: 5, DEU: 1, AT: -1 }, cap_counts: 'leads' },
      ],
    });
    assert.deepEqual(fieldsOf(bad), [
      'targets[0].country_caps.FR',
      'targets[0].country_caps.UK',
      'targets[0].hourly_cap',
      'targets[0].total_cap',
      'targets[1].cap_counts',
      'targets[1].country_caps.AT',
      'targets[1].country_caps.DEU', // each key that is not a country code, named
      'targets[1].country_caps.de',
    ]);
    const messages = Object.fromEntries(
      bad.json().errors.map((e: { field: string; message: string }) => [e.field, e.message]),
    );
    assert.match(messages['targets[0].country_caps.FR'], /does not take FR/);
    assert.match(messages['targets[0].country_caps.UK'], /use GB/);
    assert.match(messages['targets[0].hourly_cap'], /at most the daily cap \(70\)/);
    assert.match(messages['targets[0].total_cap'], /at least the daily cap \(70\)/);
    assert.equal(
      Number(
        (
          await ta.db
            .selectFrom('flows')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('name', '=', 'Bad')
            .executeTakeFirstOrThrow()
        ).n,
      ),
      0,
    );
  });
});
