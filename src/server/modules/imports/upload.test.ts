import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { goodRow, HEADER, importTarget, MAPPING, post, upload, uploaded, get } from '../../../../test/import-world.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  type TestApp,
} from '../../../../test/helpers.js';

// CSV import uploads: chunks, the answer (header, sample, suggested mapping), files that are not
// CSV or too large (nothing kept), the mapping saved for the next file, access.

const nothingKept = async (ta: TestApp) => {
  assert.equal((await ta.db.selectFrom('imports').selectAll().execute()).length, 0);
  assert.equal((await ta.db.selectFrom('import_chunks').selectAll().execute()).length, 0);
};

forEachDatabase('CSV import upload', (engine) => {
  test('a file is stored in chunks cut at row boundaries; the answer has its header, rows, a masked sample and a guessed mapping', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { IMPORT_CHUNK_BYTES: '300' } });
    const rows = Array.from({ length: 20 }, (_, i) => goodRow(i + 1));
    const csv = `\uFEFF${HEADER}\r\n${rows.join('\r\n')}\r\n`;
    const body = await uploaded(ta, csv);
    assert.deepEqual(
      [body.state, body.name, body.bytes, body.rows, body.columns],
      ['uploaded', 'leads.csv', Buffer.byteLength(csv), 20, HEADER.split(',')],
    );
    assert.deepEqual(body.suggested_mapping, MAPPING);
    assert.equal(body.sample.length, 5);
    assert.deepEqual(body.sample[0].slice(0, 2), ['Ann1', 'Lee']);
    assert.equal(body.sample[0][2], 'ann1@example.com', 'the owner holds leads:contacts');
    const chunks = await ta.db.selectFrom('import_chunks').selectAll().orderBy('seq').execute();
    assert.ok(chunks.length > 2, `several chunks: ${chunks.length}`);
    let next = 1;
    for (const c of chunks) {
      assert.equal(c.first_row, next);
      const data = JSON.parse(c.data) as string[][];
      assert.equal(data.length, c.row_count);
      next += c.row_count;
    }
    assert.deepEqual(
      chunks.flatMap((c) => JSON.parse(c.data) as string[][]).map((r) => r.join(',')),
      rows,
    );
    assert.deepEqual((await get(ta, `/api/imports/${body.id}`)).rows, 20);
    const audit = await ta.db.selectFrom('audit_log').selectAll().where('action', '=', 'import.uploaded').execute();
    assert.deepEqual(JSON.parse(audit[0].details).rows, 20);
  });

  test('over a real HTTP connection (not only inject): the request stream is read by the upload, never walked', async (t) => {
    const ta = await buildTestApp(t, engine);
    await ta.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = ta.app.server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/api/imports?name=http.csv`, {
      method: 'POST',
      headers: { 'content-type': 'text/csv', authorization: `Bearer ${ta.ownerToken}` },
      body: `${HEADER}\n${goodRow(1)}\n`,
      signal: AbortSignal.timeout(10_000),
    });
    assert.equal(res.status, 201, await res.clone().text());
    assert.equal(((await res.json()) as { rows: number }).rows, 1);
  });

  test('not CSV: 400 naming what and the row; too large: 413 naming IMPORT_MAX_BYTES; not text/csv: 415; nothing kept', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { IMPORT_MAX_BYTES: '2048', IMPORT_CHUNK_BYTES: '100' } });
    const bad = async (csv: string | Buffer, pattern: RegExp) => {
      const p = expectProblem(await upload(ta, csv), 400, 'validation_failed');
      assert.match(p.detail, pattern);
      await nothingKept(ta);
    };
    await bad('', /no header/);
    await bad(`${HEADER}\n${goodRow(1)}\n${goodRow(2)},extra\n`, /row 2 has 8 cells, more than the header's 7/);
    await bad(`${HEADER}\n${goodRow(1)}\n"unterminated,${goodRow(2)}\n`, /row 2 has an unterminated quoted cell/);
    await bad(`a,b,A\n1,2,3\n`, /"A" appears twice/);
    await bad(`a,,c\n1,2,3\n`, /column 2 has no name/);
    await bad(Buffer.from([0x61, 0x0a, 0x62, 0x00, 0x0a]), /NUL/);
    await bad(Buffer.concat([Buffer.from(`${HEADER}\n${goodRow(1)}\n`), Buffer.from([0xff, 0x0a])]), /row 2.*UTF-8/);
    const big = `${HEADER}\n${Array.from({ length: 40 }, (_, i) => goodRow(i)).join('\n')}\n`;
    const p = expectProblem(await upload(ta, big), 413, 'payload_too_large');
    assert.match(p.detail, /IMPORT_MAX_BYTES \(2048 bytes\)/);
    await nothingKept(ta);
    // Streamed without a length: refused once the count passes the limit, the chunks stored so far deleted.
    const pieces = Array.from({ length: 40 }, (_, i) => Buffer.from(`${i ? '' : HEADER + '\n'}${goodRow(i)}\n`));
    const streamed = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/imports',
      headers: { 'content-type': 'text/csv' },
      payload: Readable.from(pieces),
    });
    expectProblem(streamed, 413, 'payload_too_large');
    await nothingKept(ta);
    const json = await call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/imports', payload: { a: 1 } });
    expectProblem(json, 415, 'unsupported_media_type');
    await nothingKept(ta);
  });

  test('the mapping used is saved for the next file with the same header (any order and case); others are guessed', async (t) => {
    const ta = await buildTestApp(t, engine);
    const { providerId, campaignId } = await importTarget(ta);
    const csv = `mail;Vorname;Nachname;Tel;Land;Adresse\nx@example.com;A;B;+4915123456789;DE;10.0.0.1\n`;
    const first = await uploaded(ta, csv);
    assert.deepEqual(first.suggested_mapping, {
      first_name: 'Vorname',
      last_name: 'Nachname',
      email: 'mail',
      phone: 'Tel',
      country: 'Land',
    });
    const mapping = { ...first.suggested_mapping, ip: 'Adresse' };
    const res = await post(ta, `/api/imports/${first.id}/dry-run`, {
      mapping,
      traffic_provider_id: providerId,
      campaign_id: campaignId,
    });
    assert.equal(res.statusCode, 202, res.body);
    const again = await uploaded(
      ta,
      `ADRESSE;land;tel;nachname;vorname;MAIL\n10.0.0.2;DE;+4915123456780;C;D;y@example.com\n`,
    );
    assert.deepEqual(again.suggested_mapping, mapping);
    assert.deepEqual(again.columns, ['ADRESSE', 'land', 'tel', 'nachname', 'vorname', 'MAIL']);
  });

  test('needs leads:edit; a view-only key is refused; a scoped operator sees only its own imports', async (t) => {
    const ta = await buildTestApp(t, engine);
    const csv = `${HEADER}\n${goodRow(1)}\n`;
    expectProblem(await upload(ta, csv, null), 401, 'unauthorized');
    const viewer = await newOperator(ta, ['leads:view']);
    expectProblem(await upload(ta, csv, viewer.token), 403, 'forbidden');
    const key = await newApiKey(ta, ['leads:view']);
    expectProblem(await upload(ta, csv, key.secret), 403, 'insufficient_scope');
    await nothingKept(ta);
    const editor = await newOperator(ta, ['leads:view', 'leads:edit']);
    const mine = (await upload(ta, csv, editor.token)).json();
    assert.equal(mine.sample[0][2], 'a***@example.com', 'no leads:contacts: masked');
    const owners = await uploaded(ta, csv);
    assert.equal(owners.sample[0][2], 'ann1@example.com', 'the owner holds leads:contacts');
    const list = await get(ta, '/api/imports?limit=1');
    assert.deepEqual(
      list.data.map((i: { id: string }) => i.id),
      [owners.id],
    );
    assert.equal((await get(ta, `/api/imports?limit=1&cursor=${list.next_cursor}`)).data[0].id, mine.id);
  });
});
