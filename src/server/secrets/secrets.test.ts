// Secrets at rest (issue 29): sealed values, the keyring at start-up (key file made once, mode
// 0600; refusal when the key is missing or wrong; values stored in clear sealed), nothing in
// clear in the database, and rotation after which the server still signs and sends.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { startPartner, accepting, defaultIntegration } from '../../../test/partner-server.js';
import { makeWorld, postLead, sampleLead } from '../../../test/distribution-world.js';
import { startReceiver, verifySignature } from '../../../test/webhook-receiver.js';
import { buildTestApp, call, forEachDatabase, OWNER, type TestApp } from '../../../test/helpers.js';
import { totpAt } from '../auth/totp.js';
import { ConfigError, loadConfig } from '../config.js';
import { linkToken } from '../modules/autologin/tokens.js';
import { signingKey } from '../modules/provider-log/keys.js';
import { isSealed, newSecretKey, seal, SealError, unseal, useKeys } from './box.js';
import { KEY_FILE, openSecrets, rotateSecretKey, SecretKeyError } from './keys.js';

test('a sealed value opens only for its purpose, untouched, with its key', () => {
  const key = newSecretKey();
  useKeys([key]);
  const sealed = seal('Bearer sk_live_1', 'partner-header');
  assert.ok(isSealed(sealed) && !sealed.includes('sk_live'));
  assert.notEqual(seal('Bearer sk_live_1', 'partner-header'), sealed, 'a fresh IV each time');
  assert.equal(unseal(sealed, 'partner-header'), 'Bearer sk_live_1');
  assert.equal(unseal(sealed, 'partner-header'), 'Bearer sk_live_1', 'opened again (kept in memory): the same');
  assert.equal(unseal('stored before sealing', 'partner-header'), 'stored before sealing');
  assert.throws(() => unseal(sealed, 'webhook-secret'), SealError, 'sealed for another use');
  // The second-to-last character changed (to one it is not: choosing by the last one left it
  // unchanged once in 64 runs, and this test failed).
  const at = sealed.length - 2;
  const flipped = sealed.slice(0, at) + (sealed[at] === 'A' ? 'B' : 'A') + sealed.slice(at + 1);
  assert.notEqual(flipped, sealed);
  assert.throws(() => unseal(flipped, 'partner-header'), SealError, 'altered');
  const other = newSecretKey();
  const foreign = seal('x', 'partner-header', other);
  assert.throws(() => unseal(foreign, 'partner-header'), /needs the secret key [0-9a-f]{12}, which is not loaded/);
});

test('LEADGATE_SECRET_KEY: keys of 32 bytes, the bad one named and never echoed', () => {
  const good = newSecretKey().key.toString('base64');
  assert.equal(loadConfig({ LEADGATE_SECRET_KEY: `${good}` }).secretKeys!.length, 1);
  assert.equal(
    loadConfig({ LEADGATE_SECRET_KEY: `${good}, ${newSecretKey().key.toString('base64')}` }).secretKeys!.length,
    2,
  );
  assert.equal(loadConfig({}).secretKeys, null);
  try {
    loadConfig({ LEADGATE_SECRET_KEY: `${good},c2hvcnQta2V5` });
    assert.fail('accepted a short key');
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    assert.match(err.message, /LEADGATE_SECRET_KEY: key 2 is not 32 bytes/);
    assert.ok(!err.message.includes('c2hvcnQta2V5') && !err.message.includes(good));
  }
});

/** Every byte of the SQLite files (WAL included), or every row of the PostgreSQL schema, as text. */
async function everything(ta: TestApp): Promise<string> {
  const database = ta.config.database;
  if (database.engine === 'sqlite') {
    const dir = path.dirname(database.file);
    return readdirSync(dir)
      .filter((f) => f.startsWith(path.basename(database.file)))
      .map((f) => readFileSync(path.join(dir, f)).toString('latin1'))
      .join('\n');
  }
  return everyRow(ta);
}

/** Every row of every table, as text (what the database holds now, not old page images). */
async function everyRow(ta: TestApp): Promise<string> {
  const tables =
    ta.config.database.engine === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(ta.db)
      : await sql<{ name: string }>`
          select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(
          ta.db,
        );
  const parts: string[] = [];
  for (const { name } of tables.rows) {
    const rows = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(ta.db);
    parts.push(...rows.rows.map((r) => JSON.stringify(r)));
  }
  return parts.join('\n');
}

/** A partner with header secrets, a webhook, a status pull, the checkpoint key and the link key, all stored. */
async function storeSecrets(t: Parameters<typeof buildTestApp>[0], ta: TestApp) {
  const partner = await startPartner(t, accepting());
  const w = await makeWorld(t, ta, [{ url: partner.url }]);
  // (its server is the partner above; makeWorld takes the URL)
  const receiver = await startReceiver(t);
  const made = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/webhooks',
    payload: { name: 'Ops', url: receiver.url, event_types: ['lead.delivered'] },
  });
  assert.equal(made.statusCode, 201, made.body);
  const hook = made.json() as { id: string; secret: string };
  const pull = await call(ta.app, ta.ownerToken, {
    method: 'PUT',
    url: `/api/partners/${w.partners[0].id}/status-pull`,
    payload: {
      url: `${partner.url}/status?page={{page}}`,
      request_headers: { 'X-Pull-Key': 'pull-secret-value-98765' },
      list_path: 'rows',
      lead_id_path: 'ref',
      status_path: 'state',
      paging: { type: 'page', first_page: 1, page_size: 2, max_pages: 10 },
      interval_minutes: 5,
      lookback_hours: 48,
      status_map: {},
    },
  });
  assert.ok(pull.statusCode < 300, pull.body);
  await signingKey(ta.db);
  await linkToken(ta.db, 'lead', 'partner');
  const enrol = await call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/profile/2fa/enrol' });
  assert.equal(enrol.statusCode, 200, enrol.body);
  const seed = enrol.json().secret as string;
  const confirmed = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/profile/2fa/confirm',
    payload: { code: totpAt(seed, Date.now()) },
  });
  assert.equal(confirmed.statusCode, 200, confirmed.body);
  return { partner, w, receiver, hook, seed };
}

forEachDatabase('secrets at rest', (engine) => {
  test('the database holds no partner header value, pull header, webhook secret or two-factor seed in clear; the keys are sealed', async (t) => {
    const ta = await buildTestApp(t, engine);
    const keyFile = path.join(ta.config.dataDir, KEY_FILE);
    assert.ok(existsSync(keyFile), 'the key file is made on first start');
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    const { hook, seed } = await storeSecrets(t, ta);
    const all = await everything(ta);
    for (const clear of [
      seed,
      'partner-secret-key-123456',
      'pull-secret-value-98765',
      hook.secret.slice('whsec_'.length),
      'PRIVATE KEY',
    ])
      assert.ok(!all.includes(clear), `${clear} is stored in clear`);
    const settings = await ta.db.selectFrom('settings').select(['key', 'value']).execute();
    for (const key of ['provider_log_signing_key', 'autologin_link_key', 'blocklist_match_key'])
      assert.match(settings.find((s) => s.key === key)!.value, /lgsec1:/, `${key} sealed`);
  });

  test('start-up refuses when the key is missing or wrong, naming which; values stored in clear get sealed', async (t) => {
    const ta = await buildTestApp(t, engine);
    await storeSecrets(t, ta);
    const keyFile = path.join(ta.config.dataDir, KEY_FILE);
    const saved = readFileSync(keyFile);
    rmSync(keyFile);
    await assert.rejects(openSecrets(ta.config, ta.db), (err: Error) => {
      assert.ok(err instanceof SecretKeyError);
      assert.match(err.message, /^The secret key is missing: the database holds secrets sealed with key [0-9a-f]{12}/);
      assert.match(err.message, new RegExp(`${KEY_FILE} does not exist`));
      return true;
    });
    assert.ok(!existsSync(keyFile), 'no new key made over sealed secrets');
    const other = { ...ta.config, secretKeys: [newSecretKey().key] };
    await assert.rejects(openSecrets(other, ta.db), (err: Error) => {
      assert.ok(err instanceof SecretKeyError);
      assert.match(err.message, /^The secret key is wrong: .* but LEADGATE_SECRET_KEY gives key [0-9a-f]{12}\./);
      return true;
    });

    // The right key again: a value written in clear by an older release is sealed at start.
    writeFileSync(keyFile, saved, { mode: 0o600 });
    const id = (await ta.db.selectFrom('partners').select('id').executeTakeFirstOrThrow()).id;
    await ta.db
      .updateTable('partners')
      .set({
        integration: JSON.stringify({
          ...defaultIntegration('http://127.0.0.1:9/leads'),
          headers: { 'X-Old': 'old-clear-value-55' },
        }),
      })
      .where('id', '=', id)
      .execute();
    const opened = await openSecrets(ta.config, ta.db);
    assert.equal(opened.resealed, 1);
    // (SQLite may keep the old page image in its WAL or free pages until it reuses them: the rows are what changed.)
    assert.ok(!(await everyRow(ta)).includes('old-clear-value-55'));
    const shown = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/partners/${id}` });
    assert.equal(shown.json().integration.headers['X-Old'], '••••e-55');
  });

  test('rotation re-seals every secret with a new key; the server still sends the header and signs webhooks', async (t) => {
    const ta = await buildTestApp(t, engine);
    const { partner, w, receiver, hook, seed } = await storeSecrets(t, ta);
    const before = readFileSync(path.join(ta.config.dataDir, KEY_FILE), 'utf8');
    const rotated = await rotateSecretKey(ta.config, ta.db);
    const after = readFileSync(path.join(ta.config.dataDir, KEY_FILE), 'utf8');
    assert.notEqual(after, before);
    assert.equal(
      after.split('\n').filter((l) => l && !l.startsWith('#')).length,
      1,
      'the file keeps the new key alone',
    );
    assert.ok(rotated.resealed >= 5, `re-sealed ${rotated.resealed}`);
    const all = await everyRow(ta);
    const ids = new Set([...all.matchAll(/lgsec1:([0-9a-f]{12}):/g)].map((m) => m[1]));
    assert.deepEqual([...ids], [rotated.keyId], 'every stored secret is sealed with the new key');

    const res = await postLead(ta, w.token, sampleLead());
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(partner.received.at(-1)!.headers['x-api-key'], 'partner-secret-key-123456');
    const sent = await call(ta.app, ta.ownerToken, { method: 'POST', url: `/api/webhooks/${hook.id}/test` });
    assert.equal(sent.statusCode, 200, sent.body);
    const got = receiver.received.at(-1)!;
    assert.ok(verifySignature(hook.secret, got.headers, got.body), 'signed with the same webhook secret');
    const signIn = await ta.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: OWNER.email, password: OWNER.password, totp_code: totpAt(seed, Date.now() + 30_000) },
    });
    assert.equal(signIn.statusCode, 200, `two-factor sign-in after rotation: ${signIn.body}`);
  });
});
