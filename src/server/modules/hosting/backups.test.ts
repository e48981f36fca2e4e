// SQLite backups: consistent under concurrent writes, listed, downloaded byte for byte, deleted,
// and never a path outside the backups folder (issue 6 item 2).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { insertAttempt, insertLeads, insertPartner, insertTrafficProvider } from '../../../../test/fixtures.js';
import { buildTestApp, call, ENGINES, expectProblem, getJson } from '../../../../test/helpers.js';

const SKIP = !ENGINES.includes('sqlite') && 'SQLite backups need TEST_DATABASES to include sqlite';

test(
  'a backup made during concurrent writes is a valid database at one consistent instant',
  { skip: SKIP },
  async (t) => {
    const ta = await buildTestApp(t, 'sqlite');
    const provider = await insertTrafficProvider(ta.db);
    const partner = await insertPartner(ta.db);
    // Enough rows that the copy takes a while, so the writes below really overlap it.
    const seed = await insertLeads(
      ta.db,
      Array.from({ length: 20_000 }, () => ({ traffic_provider_id: provider })),
    );
    for (let i = 0; i < seed.length; i += 500) {
      await ta.db.transaction().execute(async (tx) => {
        for (const lead_id of seed.slice(i, i + 500))
          await insertAttempt(tx, { lead_id, partner_id: partner, attempt_no: 1 });
      });
    }
    const count = async (table: 'leads' | 'lead_attempts') =>
      Number(
        (
          await ta.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    // Each write adds a lead and its attempt in one transaction: a copy that caught one without
    // the other would not be of one instant.
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        await ta.db.transaction().execute(async (tx) => {
          const [lead_id] = await insertLeads(tx, [{ traffic_provider_id: provider }]);
          await insertAttempt(tx, { lead_id, partner_id: partner, attempt_no: 1 });
        });
        written++;
        await new Promise((r) => setImmediate(r));
      }
    })();

    while (written < 20) await new Promise((r) => setImmediate(r));
    const before = await count('leads');
    const writtenBefore = written;
    const res = await call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/hosting/backups' });
    const after = await count('leads');
    const writtenDuring = written - writtenBefore;
    writing = false;
    await writer;
    assert.equal(res.statusCode, 201, res.body);
    assert.ok(writtenDuring > 0, 'intake went on while the backup was made');

    const made = res.json();
    assert.match(made.name, /^leadgate-\d{8}T\d{9}Z\.sqlite$/);
    const file = path.join(ta.config.dataDir, 'backups', made.name);
    assert.equal(made.size_bytes, fs.statSync(file).size);
    assert.deepEqual(fs.readdirSync(path.dirname(file)), [made.name], 'no .partial left behind');

    const copy = new SQLite(file, { readonly: true });
    t.after(() => copy.close());
    assert.deepEqual(copy.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
    const leads = (copy.prepare('select count(*) as n from leads').get() as { n: number }).n;
    const attempts = (copy.prepare('select count(*) as n from lead_attempts').get() as { n: number }).n;
    const orphans = (
      copy
        .prepare(
          'select count(*) as n from leads l where not exists (select 1 from lead_attempts a where a.lead_id = l.id)',
        )
        .get() as { n: number }
    ).n;
    assert.ok(
      leads >= before && leads <= after,
      `backup has ${leads} leads; source had ${before} before and ${after} after`,
    );
    assert.equal(attempts, leads, 'every lead of the copy has its attempt, and no attempt its lead');
    assert.equal(orphans, 0);
    const operators = (copy.prepare('select count(*) as n from operators').get() as { n: number }).n;
    assert.equal(operators, 1);

    const audit = await ta.db
      .selectFrom('audit_log')
      .select(['target_id', 'actor_id'])
      .where('action', '=', 'hosting.backup_created')
      .execute();
    assert.deepEqual(audit, [{ target_id: made.name, actor_id: ta.ownerId }]);
  },
);

test('backups are listed, downloaded byte for byte and deleted; other names are refused', { skip: SKIP }, async (t) => {
  const ta = await buildTestApp(t, 'sqlite');
  assert.deepEqual(
    await getJson(ta, '/api/hosting/backups'),
    { data: [], next_cursor: null },
    'no folder yet: an empty list',
  );
  const first = (await call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/hosting/backups' })).json();
  await new Promise((r) => setTimeout(r, 5));
  const second = (await call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/hosting/backups' })).json();
  const dir = path.join(ta.config.dataDir, 'backups');
  // Files that are not finished backups are never listed or served.
  fs.writeFileSync(path.join(dir, 'leadgate-20261122T000000000Z.sqlite.partial'), 'half');
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'x');

  const list = (await getJson(ta, '/api/hosting/backups')).data;
  assert.deepEqual(
    list.map((b: { name: string }) => b.name),
    [second.name, first.name],
    'newest first',
  );
  assert.ok(
    list.every(
      (b: { size_bytes: number; created_at: string }) => b.size_bytes > 0 && !Number.isNaN(Date.parse(b.created_at)),
    ),
  );
  const page1 = await getJson(ta, '/api/hosting/backups?limit=1');
  assert.deepEqual(
    page1.data.map((b: { name: string }) => b.name),
    [second.name],
  );
  const page2 = await getJson(ta, `/api/hosting/backups?limit=1&cursor=${page1.next_cursor}`);
  assert.deepEqual(
    [page2.data.map((b: { name: string }) => b.name), page2.next_cursor],
    [[first.name], null],
    'a list pages like every other',
  );

  const dl = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/hosting/backups/${first.name}` });
  assert.equal(dl.statusCode, 200);
  assert.equal(dl.headers['content-disposition'], `attachment; filename="${first.name}"`);
  assert.equal(dl.headers['content-type'], 'application/vnd.sqlite3');
  assert.ok(dl.rawPayload.equals(fs.readFileSync(path.join(dir, first.name))), 'the download is the file');
  assert.equal(dl.rawPayload.subarray(0, 16).toString(), 'SQLite format 3\u0000');

  // Traversal and look-alike names: refused by the pattern (400) or not found (404), never served.
  fs.writeFileSync(path.join(ta.config.dataDir, 'secret.sqlite'), 'secret');
  for (const name of [
    '..%2Fleadgate.db',
    '..%2F..%2Fetc%2Fpasswd',
    'leadgate.db',
    'notes.txt',
    'leadgate-20261122T000000000Z.sqlite.partial',
    `..%2Fbackups%2F${first.name}`,
    'leadgate-20261122T000000000Z.sqlite%00',
    '..%5Csecret.sqlite',
  ]) {
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await call(ta.app, ta.ownerToken, { method, url: `/api/hosting/backups/${name}` });
      assert.ok(res.statusCode === 400 || res.statusCode === 404, `${method} ${name}: ${res.statusCode}`);
      assert.match(String(res.headers['content-type']), /problem\+json/);
    }
  }
  // Dot segments are resolved by the router before any route sees them: never a file.
  for (const url of [
    '/api/hosting/backups/../../leadgate.db',
    '/api/hosting/backups/%2E%2E',
    '/api/hosting/backups/%2E%2E/leadgate.db',
  ]) {
    const res = await call(ta.app, ta.ownerToken, { method: 'GET', url });
    assert.ok(
      !String(res.headers['content-type']).includes('sqlite'),
      `${url}: ${res.statusCode} ${res.headers['content-type']}`,
    );
  }
  expectProblem(
    await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: '/api/hosting/backups/leadgate-20200101T000000000Z.sqlite',
    }),
    404,
    'not_found',
  );
  assert.ok(
    fs.existsSync(path.join(ta.config.dataDir, 'secret.sqlite')) &&
      fs.existsSync(ta.config.database.engine === 'sqlite' ? ta.config.database.file : ''),
  );

  const del = await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/hosting/backups/${first.name}` });
  assert.equal(del.statusCode, 204, del.body);
  assert.equal(fs.existsSync(path.join(dir, first.name)), false);
  assert.deepEqual(
    (await getJson(ta, '/api/hosting/backups')).data.map((b: { name: string }) => b.name),
    [second.name],
  );
  expectProblem(
    await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/hosting/backups/${first.name}` }),
    404,
    'not_found',
  );
  expectProblem(
    await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/hosting/backups/${first.name}` }),
    404,
    'not_found',
  );
  const deleted = await ta.db
    .selectFrom('audit_log')
    .select('target_id')
    .where('action', '=', 'hosting.backup_deleted')
    .execute();
  assert.deepEqual(deleted, [{ target_id: first.name }]);
});

test('one backup at a time: a second request while one runs answers 409', { skip: SKIP }, async (t) => {
  const ta = await buildTestApp(t, 'sqlite');
  const [a, b] = await Promise.all([
    call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/hosting/backups' }),
    call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/hosting/backups' }),
  ]);
  assert.deepEqual([a.statusCode, b.statusCode].sort(), [201, 409]);
  expectProblem(a.statusCode === 409 ? a : b, 409, 'conflict');
  assert.equal((await getJson(ta, '/api/hosting/backups')).data.length, 1);
});
