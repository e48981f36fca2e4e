import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, expectProblem, forEachDatabase, type TestApp } from '../../../../test/helpers.js';
import { integrationFromStore } from '../../distribution/integrations/index.js';

// What a partner's integration may hold (validation, placeholders) and how its header values
// stay write-only. CRUD, tokens, access and deletes are in partners.test.ts.

const INTEGRATION = {
  method: 'POST',
  url: 'https://broker.example/api/leads',
  headers: { Authorization: 'Bearer sk_live_abcdefgh12345678', 'X-Short': 'abcdefgh' },
  body_template: { person: { mail: '{{lead.email}}' }, aff: 'sub={{lead.sub_id3}}' },
  success_path: 'success',
  lead_id_path: 'data.id',
  autologin_path: 'data.autologin_url',
  timeout_ms: 8000,
};

const create = (ta: TestApp, payload: object) =>
  call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/partners', payload });
const get = (ta: TestApp, url: string) => call(ta.app, ta.ownerToken, { method: 'GET', url });
const patch = (ta: TestApp, id: string, payload: object) =>
  call(ta.app, ta.ownerToken, { method: 'PATCH', url: `/api/partners/${id}`, payload });
const fields = (res: Awaited<ReturnType<typeof get>>) =>
  expectProblem(res, 400, 'validation_failed')
    .errors!.map((e) => e.field)
    .sort();

forEachDatabase('Partner integrations', (engine) => {
  test('validation errors name each bad field', async (t) => {
    const ta = await buildTestApp(t, engine);
    const base = { name: 'P', integration: { url: 'https://x.example/' } };
    // Checks beyond the schema, all reported at once.
    const many = await create(ta, {
      name: 'P',
      working_hours: { timezone: 'Mars/Olympus_Mons', days: [1], from: '09:00', to: '17:00' },
      daily_cap: 10,
      total_cap: 9,
      integration: {
        url: 'ftp://x.example/leads',
        headers: {
          'Bad Name': 'v',
          'X-Line': 'a\r\nInjected: 1',
          'X-Masked': '••••1234',
          host: 'evil.example',
          'Content-Length': '5',
        },
        body_template: {
          a: { b: ['{{lead.email}}', '{{lead.password}}'] },
          c: '{{email}}',
          d: '{{lead.phone',
          e: 'ok {{lead.sub_id5}}',
        },
      },
    });
    assert.deepEqual(fields(many), [
      'integration.body_template.a.b[1]',
      'integration.body_template.c',
      'integration.body_template.d',
      'integration.headers.Bad Name',
      'integration.headers.Content-Length',
      'integration.headers.X-Line',
      'integration.headers.X-Masked',
      'integration.headers.host',
      'integration.url',
      'total_cap',
      'working_hours.timezone',
    ]);
    // Schema checks.
    const cases: [object, string[]][] = [
      [{ ...base, integration: { url: 'https://x.example/', timeout_ms: 99 } }, ['integration.timeout_ms']],
      [{ ...base, integration: { url: 'https://x.example/', timeout_ms: 60_001 } }, ['integration.timeout_ms']],
      [{ ...base, integration: { url: 'https://x.example/', method: 'DELETE' } }, ['integration.method']],
      [
        { ...base, integration: { url: 'https://x.example/', success_path: 'a..b', lead_id_path: 'a b' } },
        ['integration.lead_id_path', 'integration.success_path'],
      ],
      [
        { ...base, integration: { url: 'https://x.example/', body_template: ['{{lead.email}}'] } },
        ['integration.body_template'],
      ],
      [{ ...base, integration: { url: 'https://x.example/', headers: { a: 1 } } }, ['integration.headers.a']],
      [{ ...base, integration: { url: 'https://x.example/', extra: 1 } }, ['integration.extra']],
      [{ ...base, countries: ['de', 'DE', 'DE'] }, ['countries', 'countries[0]']],
      [{ ...base, countries: ['GB', 'UK'] }, ['countries[1]']], // well-formed, not assigned (GB is meant)
      [
        { ...base, working_hours: { timezone: 'UTC', days: [0, 8], from: '24:00', to: '9:00' } },
        ['working_hours.days[0]', 'working_hours.days[1]', 'working_hours.from', 'working_hours.to'],
      ],
      [{ ...base, daily_cap: -1, total_cap: 1.5 }, ['daily_cap', 'total_cap']],
      [{ ...base, status: 'archived', name: ' ' }, ['name', 'status']],
      [{ name: 'P' }, ['integration']],
      [{ ...base, integration: { url: 'not a url' } }, ['integration.url']],
      [{ ...base, integration: { url: 'javascript:alert(1)' } }, ['integration.url']],
    ];
    for (const [payload, expected] of cases)
      assert.deepEqual(fields(await create(ta, payload)), expected, JSON.stringify(payload));
    // The template is free-form JSON: a NUL deep inside is named, and so is nesting too deep to be
    // a real template (5000 levels once overflowed the stack of the NUL check: a 500).
    assert.deepEqual(
      fields(
        await create(ta, {
          ...base,
          integration: { url: 'https://x.example/', body_template: { x: [{ y: 'a\u0000' }] } },
        }),
      ),
      ['integration.body_template.x[0].y'],
    );
    for (const depth of [21, 5000]) {
      const deep = `{"name":"P","integration":{"url":"https://x.example/","body_template":${'{"a":'.repeat(depth)}"{{lead.email}}"${'}'.repeat(depth)}}}`;
      const res = await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: '/api/partners',
        payload: deep,
        headers: { 'content-type': 'application/json' },
      });
      const [only, ...rest] = expectProblem(res, 400, 'validation_failed').errors!;
      assert.deepEqual(rest, []);
      assert.match(only.field, /^integration\.body_template(\.a){20}$/);
      assert.match(only.message, /deeper than 20/);
    }
    assert.equal(
      Number(
        (
          await ta.db
            .selectFrom('partners')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
      0,
    );

    // Edges that are valid.
    const ok = await create(ta, {
      ...base,
      daily_cap: 10,
      total_cap: 10,
      working_hours: { timezone: 'America/New_York', days: [6, 7], from: '22:00', to: '06:00' },
      integration: {
        url: 'https://x.example/',
        timeout_ms: 100,
        success_path: 'result.0.ok',
        body_template: { id: '{{lead.id}}' },
      },
    });
    assert.equal(ok.statusCode, 201, ok.body);

    // On PATCH, rules hold against the values the partner would end up with.
    const id = ok.json().id;
    assert.deepEqual(fields(await patch(ta, id, { total_cap: 9 })), ['total_cap']);
    assert.deepEqual(fields(await patch(ta, id, { hourly_cap: 11 })), ['hourly_cap']); // more an hour than a day
    assert.match((await patch(ta, id, { hourly_cap: 11 })).json().errors[0].message, /at most the daily cap \(10\)/);
    assert.equal((await patch(ta, id, { hourly_cap: 10 })).statusCode, 200);
    assert.deepEqual(
      fields(
        await patch(ta, id, { working_hours: { timezone: 'Nowhere/Land', days: [1], from: '00:00', to: '23:59' } }),
      ),
      ['working_hours.timezone'],
    );
    assert.deepEqual(
      fields(
        await patch(ta, id, { integration: { url: 'https://x.example/', body_template: { x: '{{lead.nope}}' } } }),
      ),
      ['integration.body_template.x'],
    );
    assert.equal((await patch(ta, id, { daily_cap: null, total_cap: 5 })).statusCode, 200);
    const row = await ta.db
      .selectFrom('partners')
      .select(['daily_cap', 'total_cap'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { daily_cap: null, total_cap: 5 });
  });

  test('header values are write-only: masked in answers, kept when sent back masked, replaced when changed', async (t) => {
    const ta = await buildTestApp(t, engine);
    const secretLong = 'Bearer sk_live_abcdefgh12345678';
    const headers = { Authorization: secretLong, 'X-Eight': '12345678', 'X-Nine': '123456789', 'X-Empty': '' };
    const made = await create(ta, { name: 'P', integration: { ...INTEGRATION, headers } });
    assert.equal(made.statusCode, 201, made.body);
    const shown = made.json().integration.headers;
    assert.deepEqual(shown, { Authorization: '••••5678', 'X-Eight': '••••', 'X-Nine': '••••6789', 'X-Empty': '••••' });
    const storedHeaders = async () =>
      integrationFromStore(
        (
          await ta.db
            .selectFrom('partners')
            .select('integration')
            .where('id', '=', made.json().id)
            .executeTakeFirstOrThrow()
        ).integration,
      ).headers;
    assert.deepEqual(await storedHeaders(), headers, 'the real values are what the database opens to');
    const raw = await ta.db
      .selectFrom('partners')
      .select('integration')
      .where('id', '=', made.json().id)
      .executeTakeFirstOrThrow();
    assert.ok(!raw.integration.includes('sk_live_abcdefgh12345678'), 'sealed at rest, not in clear');

    // Sent back exactly as shown (with another path on the same origin): the stored values stay.
    // (A new scheme, host or port refuses them: destination.test.ts.)
    const id = made.json().id;
    const same = await patch(ta, id, {
      integration: { ...INTEGRATION, url: 'https://broker.example/v2/leads', headers: shown },
    });
    assert.equal(same.statusCode, 200, same.body);
    assert.deepEqual(same.json().integration.headers, shown);
    assert.equal(same.json().integration.url, 'https://broker.example/v2/leads');
    assert.deepEqual(await storedHeaders(), headers);

    // A header name in other case still matches its stored value.
    const cased = await patch(ta, id, {
      integration: { ...INTEGRATION, headers: { ...shown, Authorization: undefined, authorization: '••••5678' } },
    });
    assert.equal(cased.statusCode, 200, cased.body);
    assert.equal((await storedHeaders()).authorization, secretLong);

    // A new value replaces; a header left out is removed; a new header is added.
    const replaced = await patch(ta, id, {
      integration: {
        ...INTEGRATION,
        headers: { authorization: 'Bearer rotated-key-9999', 'X-Nine': '••••6789', 'X-New': 'v' },
      },
    });
    assert.equal(replaced.statusCode, 200, replaced.body);
    assert.deepEqual(replaced.json().integration.headers, {
      authorization: '••••9999',
      'X-Nine': '••••6789',
      'X-New': '••••',
    });
    assert.deepEqual(await storedHeaders(), {
      authorization: 'Bearer rotated-key-9999',
      'X-Nine': '123456789',
      'X-New': 'v',
    });

    // A mask that does not match the stored value (or a header with none) is refused, not stored.
    assert.deepEqual(
      fields(await patch(ta, id, { integration: { ...INTEGRATION, headers: { 'X-Nine': '••••0000' } } })),
      ['integration.headers.X-Nine'],
    );
    assert.deepEqual(fields(await patch(ta, id, { integration: { ...INTEGRATION, headers: { 'X-Other': '••••' } } })), [
      'integration.headers.X-Other',
    ]);
    assert.deepEqual(await storedHeaders(), {
      authorization: 'Bearer rotated-key-9999',
      'X-Nine': '123456789',
      'X-New': 'v',
    });

    // A PATCH without integration leaves it as it is.
    assert.equal((await patch(ta, id, { status: 'paused' })).statusCode, 200);
    assert.deepEqual(await storedHeaders(), {
      authorization: 'Bearer rotated-key-9999',
      'X-Nine': '123456789',
      'X-New': 'v',
    });

    // No answer and no audit entry ever held a real value.
    const everything = [
      (await get(ta, `/api/partners/${id}`)).body,
      (await get(ta, '/api/partners')).body,
      (await get(ta, '/api/audit-log?limit=500')).body,
      ta.logs.join('\n'),
    ].join('\n');
    for (const secret of ['sk_live_abcdefgh', 'rotated-key', '123456789', '12345678'])
      assert.ok(!everything.includes(secret), secret);
  });
});
