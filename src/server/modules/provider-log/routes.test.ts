import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildTestApp, call, expectProblem, forEachDatabase, newPortalUser } from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { chainDue } from './chain.js';

// The log's portal routes, with a provider user's session and key: its own log only, paged by
// after=; the checkpoint signed on demand; the public key; and the verification script run
// against the real server on loopback.

const SCRIPT = join(process.cwd(), 'scripts', 'verify-provider-log.mjs');

forEachDatabase('provider log routes', (engine) => {
  test('a provider reads its own log, page by page, its checkpoint and the key; the script verifies it over HTTP', async (t) => {
    const ta = await buildTestApp(t, engine);
    const a = await makeWorld(t, ta, [{}]);
    const b = await makeWorld(t, ta, [{}]);
    const userA = await newPortalUser(ta, a.providerId);
    const userB = await newPortalUser(ta, b.providerId);
    const get = (token: string, url: string) => call(ta.app, token, { method: 'GET', url });

    const empty = await get(userA.token, '/api/portal/checkpoints/latest');
    assert.equal(empty.statusCode, 200, empty.body);
    assert.deepEqual([empty.json().seq, empty.json().hash], [0, '0'.repeat(64)], 'an empty log, signed');
    for (let i = 0; i < 3; i++) await postLead(ta, a.token, sampleLead());
    await postLead(ta, b.token, sampleLead());
    await chainDue(ta.db);

    const first = await get(userA.token, '/api/portal/log?limit=4');
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(
      first.json().data.map((e: { seq: number }) => e.seq),
      [1, 2, 3, 4],
    );
    assert.equal(first.json().next_cursor, '4');
    const rest = await get(userA.key, '/api/portal/log?after=4&limit=4');
    assert.equal(rest.statusCode, 200, rest.body);
    assert.deepEqual(
      rest.json().data.map((e: { seq: number }) => e.seq),
      [5, 6],
    );
    assert.equal(rest.json().next_cursor, null);
    const theirs = await get(userB.token, '/api/portal/log');
    assert.equal(theirs.json().data.length, 2, "B's log holds B's lead only");
    assert.ok(!theirs.body.includes(a.providerId) && !first.body.includes(b.providerId));

    const bad = expectProblem(await get(userA.token, '/api/portal/log?limit=0&after=-1'), 400, 'validation_failed');
    assert.deepEqual(bad.errors!.map((e) => e.field).sort(), ['after', 'limit']);
    expectProblem(await get(ta.ownerToken, '/api/portal/log'), 401, 'unauthorized');

    const cp = await get(userA.key, '/api/portal/checkpoints/latest');
    assert.equal(cp.statusCode, 200, cp.body);
    assert.equal(cp.json().seq, 6);
    assert.equal(cp.json().traffic_provider_id, a.providerId);
    const key = await get(userA.token, '/api/portal/public-key');
    assert.equal(key.statusCode, 200, key.body);
    assert.equal(key.json().algorithm, 'Ed25519');
    assert.equal(key.json().key_id, cp.json().key_id);

    // The script, pointed at the server (loopback) with A's key: A's saved first page is a prefix.
    const address = await ta.app.listen({ host: '127.0.0.1', port: 0 });
    const dir = mkdtempSync(join(tmpdir(), 'verify-url-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const saved = join(dir, 'saved.json');
    writeFileSync(saved, first.body);
    const out = await new Promise<{ code: number; text: string }>((resolve) =>
      execFile(
        process.execPath,
        [SCRIPT, '--saved', saved, '--url', address, '--key', userA.key],
        (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, text: stdout + stderr }),
      ),
    );
    assert.equal(out.code, 0, out.text);
    assert.match(out.text, /^OK 4 saved entries are the first 4 of today's 6; checkpoint at seq 6 verified/);
  });
});
