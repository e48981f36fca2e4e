import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildTestApp, forEachDatabase, type TestApp } from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { chainDue } from './chain.js';
import { canonicalJson, entryHash } from './hashing.js';
import { checkpointPublicKey, latestProviderCheckpoint, readProviderLog } from './service.js';

// scripts/verify-provider-log.mjs run as a provider would run it (a child process, plain Node),
// against copies of the log exported as the portal API pages them, after the database was
// tampered with directly.

const SCRIPT = join(process.cwd(), 'scripts', 'verify-provider-log.mjs');

function verify(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, ...args], (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code) : 0, out: stdout + stderr }),
    );
  });
}

/** The log as the API pages it (5 a page), one page a line: what a provider saves. */
async function exportPages(ta: TestApp, providerId: string, upTo = Infinity): Promise<string> {
  const lines: string[] = [];
  let after = 0;
  for (;;) {
    const page = await readProviderLog(ta.db, providerId, { after, limit: 5 });
    page.data = page.data.filter((e) => e.seq <= upTo);
    lines.push(JSON.stringify(page));
    if (page.next_cursor === null || page.data.length < 5) return lines.join('\n') + '\n';
    after = Number(page.next_cursor);
  }
}

forEachDatabase('provider log verification script', (engine) => {
  test('passes on an untouched log; finds each change made in the database and names the first bad seq', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    for (let i = 0; i < 6; i++) await postLead(ta, w.token, sampleLead());
    await chainDue(ta.db); // 12 entries: received, accepted per lead
    const dir = mkdtempSync(join(tmpdir(), 'verify-log-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = (name: string, text: string) => {
      const p = join(dir, name);
      writeFileSync(p, text);
      return p;
    };
    const saved = file('saved.jsonl', await exportPages(ta, w.providerId));
    const cp = file('checkpoint.json', JSON.stringify(await latestProviderCheckpoint(ta.db, w.providerId)));
    const key = file('key.json', JSON.stringify(await checkpointPublicKey(ta.db)));
    const rows = await ta.db
      .selectFrom('provider_log')
      .selectAll()
      .where('traffic_provider_id', '=', w.providerId)
      .execute();
    assert.equal(rows.length, 12);
    const restore = async () => {
      await ta.db.deleteFrom('provider_log').where('traffic_provider_id', '=', w.providerId).execute();
      await ta.db.insertInto('provider_log').values(rows).execute();
    };
    const check = async (savedFile = saved, keyFile = key) =>
      verify([
        '--saved',
        savedFile,
        '--current',
        file('current.jsonl', await exportPages(ta, w.providerId)),
        '--checkpoint',
        cp,
        '--public-key',
        keyFile,
      ]);
    const row = (seq: number) => rows.find((r) => Number(r.seq) === seq)!;
    const setRow = (seq: number, values: Record<string, unknown>) =>
      ta.db
        .updateTable('provider_log')
        .set(values)
        .where('traffic_provider_id', '=', w.providerId)
        .where('seq', '=', seq)
        .execute();

    const ok = await check();
    assert.equal(ok.code, 0, ok.out);
    assert.match(ok.out, /^OK 12 saved entries are the first 12 of today's 12; checkpoint at seq 12 verified/);

    // An entry's data changed, its hash left.
    await setRow(5, { data: canonicalJson({ country: 'FR' }) });
    let r = await check();
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /today's log: seq 5: hash \w+ does not match its content/);
    await restore();

    // An entry deleted.
    await ta.db
      .deleteFrom('provider_log')
      .where('traffic_provider_id', '=', w.providerId)
      .where('seq', '=', 4)
      .execute();
    r = await check();
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /today's log: seq 5: expected seq 4 here/);
    await restore();

    // Two entries swapped.
    await setRow(6, { seq: 1000 });
    await setRow(7, { seq: 6 });
    await setRow(1000, { seq: 7 });
    r = await check();
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /today's log: seq 6: prev_hash \w+ is not the hash of the entry before/);
    await restore();

    // A cheater changes an entry and recomputes its hash: the link from the next one breaks.
    const forged = { ...row(5), data: canonicalJson({ country: 'FR' }) };
    await setRow(5, { data: forged.data, hash: entryHash({ ...forged, seq: 5 }) });
    r = await check();
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /today's log: seq 6: prev_hash/);

    // … and every hash after it: the chain holds, but not the saved copy, nor the checkpoint.
    let prev = entryHash({ ...forged, seq: 5 });
    for (let seq = 6; seq <= 12; seq++) {
      const e = { ...row(seq), seq, prev_hash: prev };
      prev = entryHash(e);
      await setRow(seq, { prev_hash: e.prev_hash, hash: prev });
    }
    r = await check();
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /seq 5: hash differs from the saved copy/);
    const early = file('early.jsonl', (await exportPages(ta, w.providerId, 4)).replace(/\n$/, ''));
    r = await check(early);
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /seq 12: hash \w+ is not the one the checkpoint signed/);
    await restore();

    // A saved copy that today's log no longer starts with (an entry dropped from the end).
    await ta.db
      .deleteFrom('provider_log')
      .where('traffic_provider_id', '=', w.providerId)
      .where('seq', '=', 12)
      .execute();
    r = await verify([
      '--saved',
      saved,
      '--current',
      file('c.jsonl', await exportPages(ta, w.providerId)),
      '--provider',
      w.providerId,
    ]);
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /seq 12: in the saved copy but no longer in today's log/);
    await restore();

    // The checkpoint verifies with the published key only.
    const other = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    r = await check(saved, file('other.pem', other));
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /checkpoint at seq 12: the signature does not verify with the public key/);
    const pem = file('published.pem', (await checkpointPublicKey(ta.db)).public_key_pem);
    r = await check(saved, pem);
    assert.equal(r.code, 0, r.out);
  });
});
