import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  getJson,
  newOperator,
  type TestApp,
} from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { CompiledQuery, sql } from 'kysely';
import { blockingEntry } from './blocklist-queries.js';
import { blocklistShapes, forgetShapes } from './blocklist-shapes.js';
import { leadKeys } from './match-keys.js';

const QUALITY = 'the lead did not pass the quality checks';

async function block(ta: TestApp, payload: object, token = ta.ownerToken) {
  const res = await call(ta.app, token, { method: 'POST', url: '/api/blocklists', payload });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}
const importCsv = (ta: TestApp, csv: string, query = '', token = ta.ownerToken) =>
  call(ta.app, token, {
    method: 'POST',
    url: `/api/blocklists/import${query}`,
    headers: { 'content-type': 'text/csv' },
    payload: csv,
  });
const storedReason = async (ta: TestApp, id: string) =>
  await ta.db.selectFrom('leads').select(['status', 'reason']).where('id', '=', id).executeTakeFirstOrThrow();

forEachDatabase('Blocklists', (engine) => {
  test('intake refuses a lead any kind of entry matches, telling the provider only that it failed quality checks', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const cases: [object, Record<string, unknown>, Record<string, unknown>][] = [
      // entry, a lead it blocks, a lead it does not
      [
        { kind: 'email', value: 'Spam.Er@EXAMPLE.com' },
        { email: 'ｓｐａｍ.ｅｒ@example.com' },
        { email: 'spam.er2@example.com' },
      ],
      [{ kind: 'email', value: 'max@bücher.de' }, { email: 'MAX@xn--bcher-kva.de' }, { email: 'max@buecher.de' }],
      [{ kind: 'email_domain', value: 'junk.test' }, { email: 'a@mail.junk.test' }, { email: 'a@notjunk.test' }],
      [{ kind: 'phone', value: '+49 151 99998888' }, { phone: '+4915199998888' }, { phone: '+4915199998889' }],
      [{ kind: 'ip', value: '198.51.100.0/25' }, { ip: '198.51.100.127' }, { ip: '198.51.100.128' }],
      [{ kind: 'ip', value: '2001:db8:aa::/48' }, { ip: '2001:DB8:AA:1::9' }, { ip: '2001:db8:ab::9' }],
      [{ kind: 'sub_id', value: 'bad-source' }, { sub_id4: 'bad-source' }, { sub_id4: 'Bad-Source' }],
    ];
    for (const [entry, blocked, passed] of cases) {
      const e = await block(ta, entry);
      const refused = await postLead(ta, w.token, sampleLead(blocked));
      assert.equal(refused.statusCode, 201, refused.body);
      assert.equal(
        refused.json().status,
        'rejected',
        `${JSON.stringify(entry)} let ${JSON.stringify(blocked)} through`,
      );
      assert.equal(refused.json().reason, QUALITY);
      const stored = await storedReason(ta, refused.json().id);
      assert.match(stored.reason!, new RegExp(`^blocklisted: .*\\(global entry ${e.id}\\)$`));
      const ok = await postLead(ta, w.token, sampleLead(passed));
      assert.notEqual(ok.json().status, 'rejected', `${JSON.stringify(entry)} blocked ${JSON.stringify(passed)}`);
    }
    // The reason names the block for IPs, not the lead's own contacts.
    const ipLead = await postLead(ta, w.token, sampleLead({ ip: '198.51.100.1' }));
    assert.match((await storedReason(ta, ipLead.json().id)).reason!, /^blocklisted: ip 198\.51\.100\.0\/25 /);
  });

  test("a provider's entry blocks only that provider's leads; an expired entry blocks nothing", async (t) => {
    const ta = await buildTestApp(t, engine);
    const a = await makeWorld(t, ta, [{}]);
    const b = await makeWorld(t, ta, [{}]);
    const e = await block(ta, { kind: 'sub_id', value: 'src-1', traffic_provider_id: a.providerId });
    assert.equal(e.traffic_provider_id, a.providerId);
    assert.equal((await postLead(ta, a.token, sampleLead({ sub_id1: 'src-1' }))).json().status, 'rejected');
    assert.notEqual((await postLead(ta, b.token, sampleLead({ sub_id1: 'src-1' }))).json().status, 'rejected');

    const soon = await block(ta, {
      kind: 'sub_id',
      value: 'src-2',
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    assert.equal((await postLead(ta, b.token, sampleLead({ sub_id1: 'src-2' }))).json().status, 'rejected');
    await ta.db
      .updateTable('blocklist_entries')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', soon.id)
      .execute();
    assert.notEqual((await postLead(ta, b.token, sampleLead({ sub_id1: 'src-2' }))).json().status, 'rejected');
    const listed = await getJson(ta, '/api/blocklists');
    assert.deepEqual(
      listed.data.map((x: { id: string }) => x.id),
      [e.id],
    );
    const all = await getJson(ta, '/api/blocklists?include_expired=true');
    assert.deepEqual(
      all.data.map((x: { id: string; active: boolean }) => [x.id, x.active]),
      [
        [soon.id, false],
        [e.id, true],
      ],
    );

    // The shapes intake builds keys for follow what is listed (blocklist-shapes.ts).
    const shapes = async () =>
      Object.fromEntries(
        (await ta.db.selectFrom('blocklist_shapes').selectAll().where('entries', '>', 0).execute()).map((r) => [
          r.shape,
          Number(r.entries),
        ]),
      );
    assert.deepEqual(await shapes(), { sub_id: 2 });
    // Removed: the next lead passes; the refused one stays refused.
    const del = await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/blocklists/${e.id}` });
    assert.equal(del.statusCode, 204);
    assert.notEqual((await postLead(ta, a.token, sampleLead({ sub_id1: 'src-1' }))).json().status, 'rejected');
    assert.deepEqual(await shapes(), { sub_id: 1 });
    await block(ta, { kind: 'ip', value: '192.0.2.0/24' });
    await block(ta, { kind: 'ip', value: '192.0.2.77' });
    assert.equal((await postLead(ta, b.token, sampleLead({ ip: '192.0.2.5' }))).json().status, 'rejected');
    assert.deepEqual(await shapes(), { sub_id: 1, 'ip4/24': 1, 'ip4/32': 1 });
  });

  test('bad entries get 400 naming what is wrong, a value listed twice 409, and nothing is stored', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const post = (payload: object) => call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/blocklists', payload });
    let p = expectProblem(await post({ kind: 'ip', value: '10.1.2.3/8' }), 400, 'validation_failed');
    assert.deepEqual(p.errors, [
      { field: 'value', message: 'has address bits set past its /8 prefix: the block is 10.0.0.0/8' },
    ]);
    p = expectProblem(
      await post({
        kind: 'phone',
        value: '0151 1234',
        traffic_provider_id: 'nope',
        expires_at: '2001-01-01T00:00:00Z',
      }),
      400,
      'validation_failed',
    );
    assert.deepEqual(
      p.errors!.map((e) => e.field),
      ['value', 'traffic_provider_id', 'expires_at'],
    );
    expectProblem(await post({ kind: 'fax', value: '1' }), 400, 'validation_failed');
    const first = await block(ta, { kind: 'email', value: 'x@example.com' });
    p = expectProblem(await post({ kind: 'email', value: 'X@Example.com' }), 409, 'conflict');
    assert.match(p.detail, new RegExp(`already listed globally \\(entry ${first.id}\\)`));
    // The same value for one provider is another entry.
    await block(ta, { kind: 'email', value: 'x@example.com', traffic_provider_id: w.providerId });
    const n = await ta.db
      .selectFrom('blocklist_entries')
      .select((e) => e.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(n.n), 2);
  });

  test('a CSV adds entries all or nothing, naming each bad row; values already listed are counted, not doubled', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    await block(ta, { kind: 'ip', value: '192.0.2.1' });
    const bad = await importCsv(
      ta,
      'kind,value,expires_at\nip,192.0.2.0/24,\nphone,12,\nemail,a@b.test,tomorrow\nfax,1,\n',
    );
    const p = expectProblem(bad, 400, 'validation_failed');
    assert.deepEqual(
      p.errors!.map((e) => e.field),
      ['row 2 value', 'row 3 expires_at', 'row 4 kind'],
    );
    assert.equal((await getJson(ta, '/api/blocklists')).data.length, 1, 'nothing of a bad file is added');

    const ok = await importCsv(
      ta,
      'Kind;Value;Note\nip;192.0.2.1;again\nip;192.0.2.0/24;\nemail_domain;spam.test;"a ""list"""\nemail_domain;SPAM.test;twice\n',
    );
    assert.equal(ok.statusCode, 200, ok.body);
    assert.deepEqual(ok.json(), { rows: 4, added: 2, already_listed: 2 });
    const shapes = await ta.db.selectFrom('blocklist_shapes').selectAll().orderBy('shape').execute();
    assert.deepEqual(
      shapes.map((r) => [r.shape, Number(r.entries)]),
      [
        ['email_domain', 1],
        ['ip4/24', 1],
        ['ip4/32', 1],
      ],
      'only the rows added are counted',
    );
    const onlyValues = await importCsv(
      ta,
      'value\nsrc-9\nsrc-10\n',
      `?kind=sub_id&traffic_provider_id=${w.providerId}`,
    );
    assert.deepEqual(onlyValues.json(), { rows: 2, added: 2, already_listed: 0 });
    assert.equal(
      (await postLead(ta, w.token, sampleLead({ sub_id2: 'src-10', email: 'z@mx.spam.test' }))).json().status,
      'rejected',
    );
    const note = (await getJson(ta, '/api/blocklists?kind=email_domain')).data[0].note;
    assert.equal(note, 'a "list"');
    const noKind = await importCsv(ta, 'value\n1.2.3.4\n');
    assert.deepEqual(
      expectProblem(noKind, 400, 'validation_failed').errors!.map((e) => e.field),
      ['header'],
    );
    expectProblem(await importCsv(ta, 'kind,value\nip,"1.2.3.4\n'), 400, 'validation_failed');
    const audit = await getJson(ta, '/api/audit-log?action=blocklist.imported');
    assert.equal(audit.data.length, 2);
  });

  test('contacts are masked without leads:contacts; a role limited to providers sees and edits only theirs', async (t) => {
    const ta = await buildTestApp(t, engine);
    const a = await makeWorld(t, ta, [{}]);
    const b = await makeWorld(t, ta, [{}]);
    await block(ta, { kind: 'email', value: 'secret.person@example.com' });
    const mine = await block(ta, { kind: 'phone', value: '+4915112345678', traffic_provider_id: a.providerId });
    const theirs = await block(ta, { kind: 'ip', value: '192.0.2.9', traffic_provider_id: b.providerId });

    const viewer = await newOperator(ta, ['quality:view']);
    const seen = await getJson(ta, '/api/blocklists', viewer.token);
    assert.deepEqual(seen.data.map((e: { value: string }) => e.value).sort(), [
      '+49*********78',
      '192.0.2.9',
      's***@example.com',
    ]);
    assert.doesNotMatch(JSON.stringify(seen), /secret\.person|12345678/);
    const found = await getJson(ta, '/api/blocklists?value=SECRET.person@example.com');
    assert.equal(found.data.length, 1);
    // Without leads:contacts a whole email or phone is not looked up: it would confirm a masked contact.
    for (const value of ['secret.person@example.com', '+49 151 12345678']) {
      const res = await call(ta.app, viewer.token, {
        method: 'GET',
        url: `/api/blocklists?value=${encodeURIComponent(value)}`,
      });
      assert.match(
        expectProblem(res, 400, 'validation_failed').errors![0].message,
        /needs the permission leads:contacts/,
      );
    }
    assert.equal((await getJson(ta, '/api/blocklists?value=192.0.2.9', viewer.token)).data.length, 1);
    // The audit record keeps the masked value only.
    const audit = await getJson(ta, '/api/audit-log?action=blocklist.added');
    assert.doesNotMatch(JSON.stringify(audit), /secret\.person/);

    expectProblem(
      await call(ta.app, viewer.token, {
        method: 'POST',
        url: '/api/blocklists',
        payload: { kind: 'sub_id', value: 'x' },
      }),
      403,
      'forbidden',
    );
    const none = await newOperator(ta, ['leads:view']);
    expectProblem(await call(ta.app, none.token, { method: 'GET', url: '/api/blocklists' }), 403, 'forbidden');

    const scoped = await newOperator(ta, ['quality:view', 'quality:edit'], {
      traffic_provider_ids: [a.providerId],
      partner_ids: null,
    });
    const list = await getJson(ta, '/api/blocklists', scoped.token);
    assert.deepEqual(
      list.data.map((e: { id: string }) => e.id),
      [mine.id],
    );
    for (const url of [`/api/blocklists/${theirs.id}`]) {
      expectProblem(await call(ta.app, scoped.token, { method: 'GET', url }), 404, 'not_found');
      expectProblem(await call(ta.app, scoped.token, { method: 'DELETE', url }), 404, 'not_found');
    }
    const global = await call(ta.app, scoped.token, {
      method: 'POST',
      url: '/api/blocklists',
      payload: { kind: 'sub_id', value: 'x' },
    });
    assert.deepEqual(
      expectProblem(global, 400, 'validation_failed').errors!.map((e) => e.field),
      ['traffic_provider_id'],
    );
    const other = await call(ta.app, scoped.token, {
      method: 'POST',
      url: '/api/blocklists',
      payload: { kind: 'sub_id', value: 'x', traffic_provider_id: b.providerId },
    });
    assert.equal(expectProblem(other, 400, 'validation_failed').errors![0].message, 'no traffic provider with that id');
    await block(ta, { kind: 'sub_id', value: 'x', traffic_provider_id: a.providerId }, scoped.token);
  });

  test("intake's check probes the key index once per key, however many global entries there are", async (t) => {
    const ta = await buildTestApp(t, engine);
    const rows = Array.from({ length: 5000 }, (_, i) => ({
      id: `e${i}`,
      kind: 'ip' as const,
      value: `10.${i >> 8}.${i & 255}.0/24`,
      match_key: `ip4:0a${(i >> 8).toString(16).padStart(2, '0')}${(i & 255).toString(16).padStart(2, '0')}00/24`,
      traffic_provider_id: null,
      expires_at: null,
      note: null,
      created_by: null,
      created_at: new Date().toISOString(),
    }));
    for (let i = 0; i < rows.length; i += 500)
      await ta.db
        .insertInto('blocklist_entries')
        .values(rows.slice(i, i + 500))
        .execute();
    if (engine === 'postgres') await sql`analyze blocklist_entries`.execute(ta.db);
    const keys = leadKeys({
      ...sampleLead({ ip: '10.1.2.3' }),
      sub_id1: 's',
      sub_id2: null,
      sub_id3: null,
      sub_id4: null,
      sub_id5: null,
    } as never);
    const q = blockingEntry(ta.db, JSON.stringify(keys), 'p', new Date().toISOString()).compile();
    const found = await ta.db.executeQuery(q);
    assert.equal((found.rows[0] as { id: string }).id, 'e258', 'the block 10.1.2.0/24');
    const explain = engine === 'postgres' ? 'explain' : 'explain query plan';
    const plan = await ta.db.executeQuery(CompiledQuery.raw(`${explain} ${q.sql}`, [...q.parameters]));
    const text = plan.rows.map((r) => Object.values(r as object).join(' ')).join(' | ');
    if (engine === 'postgres') assert.match(text, /Index Cond: \(match_key = ANY/, text);
    else assert.match(text, /SEARCH blocklist_entries USING INDEX blocklist_entries_key \(match_key=\?/, text);
    assert.doesNotMatch(text, /SCAN blocklist_entries|Seq Scan|blocklist_entries_provider/, text);
  });

  test('the shapes are known per process: a shape listed by another process counts once the cache is asked again', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    assert.equal((await blocklistShapes(ta.db)).size, 0);
    // Another process lists a sub id: its entry and its shape are in the database, this process's cache is not told.
    await ta.db
      .insertInto('blocklist_entries')
      .values({
        id: 'other-process',
        kind: 'sub_id',
        value: 'elsewhere',
        match_key: 'sub:elsewhere',
        traffic_provider_id: null,
        expires_at: null,
        note: null,
        created_by: null,
        created_at: new Date().toISOString(),
      })
      .execute();
    await ta.db.insertInto('blocklist_shapes').values({ shape: 'sub_id', entries: 1 }).execute();
    assert.notEqual((await postLead(ta, w.token, sampleLead({ sub_id1: 'elsewhere' }))).json().status, 'rejected');
    forgetShapes(ta.db); // what SHAPES_TTL_MS does by itself
    assert.equal((await postLead(ta, w.token, sampleLead({ sub_id1: 'elsewhere' }))).json().status, 'rejected');
    // A new entry of a shape already in use blocks at once, whichever process lists it.
    await ta.db
      .insertInto('blocklist_entries')
      .values({
        id: 'other-process-2',
        kind: 'sub_id',
        value: 'elsewhere-2',
        match_key: 'sub:elsewhere-2',
        traffic_provider_id: null,
        expires_at: null,
        note: null,
        created_by: null,
        created_at: new Date().toISOString(),
      })
      .execute();
    assert.equal((await postLead(ta, w.token, sampleLead({ sub_id1: 'elsewhere-2' }))).json().status, 'rejected');
  });
});
