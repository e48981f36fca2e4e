// Property-based fuzzing of every operation the server publishes in /api/openapi.json.
//
// For each operation, fast-check builds malformed requests (odd path parameters, query
// strings, bodies, content types and Authorization headers) and sends them with app.inject,
// first with the owner's dashboard session, then with an API key holding every scope.
// Whatever the input, the server must answer like the contract says:
//   - never a 5xx;
//   - every 4xx is application/problem+json whose numeric `status` equals the HTTP status and
//     which carries a string `code`; a 400 validation_failed names each bad field in `errors`;
//   - when the request certainly reached the operation (and is shaped like the document says),
//     the status is one the operation declares, and a 2xx body matches the declared schema.
//
// Runs are bounded and reproducible: a fixed seed (FUZZ_SEED, printed with any failure) and
// FUZZ_RUNS runs per operation per property.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { ALL_PERMISSIONS } from '../src/server/auth/permissions.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  login,
  newApiKey,
  newPortalUser,
  newOperator,
  OWNER,
  type Engine,
  type TestApp,
} from './helpers.js';
import { operationsOf, requestFor, type FuzzRequest, type Operation } from './fuzz/requests.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261121);
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

// ---------------------------------------------------------------------------------------------
// Sending and judging

const wellFormed = (s: string) =>
  typeof (s as any).toWellFormed === 'function' ? (s as any).toWellFormed() : s.replace(/[\uD800-\uDFFF]/g, '\uFFFD');
const enc = (s: string) => encodeURIComponent(wellFormed(s));

function urlOf(o: Operation, r: FuzzRequest): { url: string; exact: boolean } {
  let exact = true;
  let i = 0;
  const path = o.path.replace(/\{[^}]+\}/g, () => {
    const { value, raw } = r.pathValues[i++];
    const segment = raw ? value : enc(value);
    if (raw || segment === '' || segment === '.' || segment === '..') exact = false;
    return segment;
  });
  const qs = r.query.entries
    .map(([k, v]) =>
      r.query.raw && /^[\x21-\x7e]*$/.test(k + v) && !/[#&]/.test(k + v) ? `${k}=${v}` : `${enc(k)}=${enc(v)}`,
    )
    .join('&');
  return { url: qs ? `${path}?${qs}` : path, exact };
}

interface Judge {
  problem: ValidateFunction;
  responses: Map<string, ValidateFunction | 'empty' | { download: string }>;
}

function judgeFor(doc: any, ops: Operation[]): Map<Operation, Judge> {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: false, validateFormats: true }));
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const problem = ajv.compile({ $ref: 'doc#/components/schemas/Problem' });
  const judges = new Map<Operation, Judge>();
  for (const o of ops) {
    const responses = new Map<string, ValidateFunction | 'empty' | { download: string }>();
    for (const [status, resp] of Object.entries<any>(o.op.responses)) {
      if (!/^2/.test(status)) continue;
      const schema = resp.content?.['application/json']?.schema;
      // A file download (the leads CSV export) declares one text/* media type instead of JSON.
      const types = Object.keys(resp.content ?? {});
      const download = !schema && types.length === 1 && /^text\//.test(types[0]) ? { download: types[0] } : null;
      responses.set(
        status,
        schema
          ? ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')))
          : (download ?? 'empty'),
      );
    }
    judges.set(o, { problem, responses });
  }
  return judges;
}

function describeReq(o: Operation, url: string, r: FuzzRequest, res: LightMyRequestResponse) {
  const body = r.body.kind === 'json' ? JSON.stringify(r.body.value) : r.body.kind === 'text' ? r.body.text : '(none)';
  return (
    `${o.method} ${url}\n  content-type: ${JSON.stringify(r.contentType)} authorization: ${JSON.stringify(r.authorization?.slice(0, 120))}` +
    ` headers: ${JSON.stringify(r.headers).slice(0, 300)}\n  body: ${body.slice(0, 400)}\n  → ${res.statusCode} ${res.headers['content-type']} ${res.body.slice(0, 600)}`
  );
}

function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function judge(o: Operation, j: Judge, url: string, exact: boolean, r: FuzzRequest, res: LightMyRequestResponse) {
  const where = () => describeReq(o, url, r, res);
  assert.ok(res.statusCode < 500, `5xx from the server:\n${where()}`);
  if (res.statusCode >= 400) {
    assert.match(
      String(res.headers['content-type']),
      /^application\/problem\+json/,
      `a 4xx that is not problem+json:\n${where()}`,
    );
    const body = parseJson(res.body);
    assert.ok(body && typeof body === 'object', `a problem body that is not a JSON object:\n${where()}`);
    assert.equal(body.status, res.statusCode, `problem.status differs from the HTTP status:\n${where()}`);
    assert.equal(typeof body.code, 'string', `problem without a string code:\n${where()}`);
    assert.ok(
      j.problem(body as unknown),
      `problem does not match the Problem schema (${JSON.stringify(j.problem.errors)}):\n${where()}`,
    );
    if (res.statusCode === 400 && body.code === 'validation_failed') {
      assert.ok(Array.isArray(body.errors) && body.errors.length > 0, `validation_failed without errors:\n${where()}`);
      for (const e of body.errors) {
        assert.ok(
          typeof e.field === 'string' && typeof e.message === 'string',
          `bad errors entry ${JSON.stringify(e)}:\n${where()}`,
        );
      }
    }
    if (res.statusCode === 401)
      assert.match(String(res.headers['www-authenticate']), /^Bearer/, `401 without WWW-Authenticate:\n${where()}`);
  }
  // The document must describe what happened, when the request surely reached this operation and
  // is shaped as the document describes (no body sent to an operation that takes none).
  const shaped = !!o.bodySchema || (r.body.kind === 'none' && r.contentType === undefined);
  if (!exact || !shaped) return;
  const status = String(res.statusCode);
  assert.ok(
    status in o.op.responses,
    `status ${status} is not declared by ${o.id} (declares ${Object.keys(o.op.responses)}):\n${where()}`,
  );
  const check = j.responses.get(status);
  if (check === 'empty') assert.equal(res.body, '', `${status} declared without content but has a body:\n${where()}`);
  else if (check && 'download' in check) {
    assert.ok(
      String(res.headers['content-type']).startsWith(check.download),
      `${status} is not ${check.download}:\n${where()}`,
    );
  } else if (check) {
    assert.match(
      String(res.headers['content-type']),
      /^application\/json/,
      `${status} is not application/json:\n${where()}`,
    );
    assert.ok(
      check(JSON.parse(res.body)),
      `${status} body does not match its declared schema (${JSON.stringify(check.errors)}):\n${where()}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// The properties

interface Fixture {
  ta: TestApp;
  doc: any;
  ops: Operation[];
  judges: Map<Operation, Judge>;
  known: string[];
  /** A traffic provider's token, for the intake operation (its only active campaign has no flow). */
  intakeToken: string;
  /** A portal user of another provider (rotating its intake token leaves intakeToken alone). */
  portal: { email: string; password: string; token: string; key: string };
}

async function fixture(t: TestContext, engine: Engine): Promise<Fixture> {
  const ta = await buildTestApp(t, engine);
  const docRes = await ta.app.inject({ method: 'GET', url: '/api/openapi.json' });
  assert.equal(docRes.statusCode, 200);
  const doc = docRes.json();
  const ops = operationsOf(doc);
  assert.ok(ops.length >= 20, `only ${ops.length} operations in the document`);
  // Real ids, so that some requests get past "not found" into the handlers: a victim operator
  // with its own role, the built-in admin role, and a key. Never the owner itself.
  const victim = await newOperator(ta, ['roles:view', 'leads:view']);
  const key = await newApiKey(ta, ['roles:view']);
  const admin = await ta.db.selectFrom('roles').select('id').where('builtin', '=', 1).executeTakeFirstOrThrow();
  // Kept out of `known`: the fuzzer must not pause the provider or rotate its token mid-run.
  const provider = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/traffic-providers',
    payload: { name: 'Fuzzed affiliate' },
  });
  const campaign = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/campaigns',
    payload: { name: 'Fuzzed campaign', traffic_provider_id: provider.json().id, payout: { model: 'cpl', amount: 1 } },
  });
  assert.equal(campaign.statusCode, 201, campaign.body);
  const portalProvider = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/traffic-providers',
    payload: { name: 'Fuzzed portal affiliate' },
  });
  const portal = await newPortalUser(ta, portalProvider.json().id);
  return {
    portal,
    ta,
    doc,
    ops,
    judges: judgeFor(doc, ops),
    known: [victim.id, victim.roleId, admin.id, key.id],
    intakeToken: provider.json().token,
  };
}

async function fuzzAll(
  f: Fixture,
  name: string,
  credential: (o: Operation) => string,
  afterEach: (o: Operation, res: LightMyRequestResponse) => Promise<void>,
) {
  let requests = 0;
  const seen = new Map<string, number>(); // "operationId status" → count, reported as a diagnostic
  for (const o of f.ops) {
    const j = f.judges.get(o)!;
    const own = o.intake ? () => f.intakeToken : () => credential(o);
    const property = fc.asyncProperty(requestFor(o, f.known, own()), async (r) => {
      const { url, exact } = urlOf(o, r);
      const headers: Record<string, string> = { ...r.headers };
      const auth = r.authorization ?? `Bearer ${own()}`;
      headers.authorization = auth;
      if (r.contentType !== undefined) headers['content-type'] = r.contentType;
      const payload =
        r.body.kind === 'json'
          ? (JSON.stringify(r.body.value) ?? 'null')
          : r.body.kind === 'text'
            ? r.body.text
            : undefined;
      const res = await f.ta.app.inject({
        method: o.method as any,
        url,
        headers,
        ...(payload !== undefined ? { payload } : {}),
      });
      requests++;
      const k = `${o.id} ${res.statusCode}`;
      seen.set(k, (seen.get(k) ?? 0) + 1);
      judge(o, j, url, exact, r, res);
      // Our own credential, untouched, must keep working on every protected operation.
      if (r.authorization === undefined && !o.isPublic && exact) {
        assert.notEqual(
          res.statusCode,
          401,
          `${name}: the fuzzer's own credential was refused:\n${describeReq(o, url, r, res)}`,
        );
      }
      await afterEach(o, res);
    });
    try {
      await fc.assert(property, { seed: SEED, numRuns: RUNS });
    } catch (err) {
      const cause = (err as Error).cause as Error | undefined;
      throw new Error(
        `${name}: ${o.method} ${o.path} (${o.id}) failed with FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}\n${cause?.message ?? ''}\n${(err as Error).message}`,
      );
    }
  }
  return { requests, seen };
}

/** One line per operation: how often each status came back. */
const histogram = (seen: Map<string, number>) =>
  [...seen].sort().reduce<Record<string, string[]>>((acc, [k, n]) => {
    const [id, status] = k.split(' ');
    (acc[id] ??= []).push(`${status}×${n}`);
    return acc;
  }, {});

forEachDatabase('Fuzzing every operation', (engine) => {
  test('inputs the fuzzer found answering 5xx or non-problem errors are now 400 problems naming the field', async (t) => {
    const ta = await buildTestApp(t, engine);
    const get = (url: string) => call(ta.app, ta.ownerToken, { method: 'GET', url });
    const fields = (res: LightMyRequestResponse) =>
      expectProblem(res, 400, 'validation_failed').errors!.map((e) => e.field);
    // U+0000 cannot be stored or compared by PostgreSQL (it answered 500): refused everywhere alike.
    // In a path, NUL is refused before routing, like encoded slashes (request-target.ts).
    assert.deepEqual(fields(await get('/api/roles/%00')), ['url']);
    assert.deepEqual(fields(await get('/api/audit-log?action=a%00b')), ['action']);
    const cursor = Buffer.from(JSON.stringify({ id: '\u0000' })).toString('base64url');
    assert.deepEqual(fields(await get(`/api/roles?cursor=${cursor}`)), ['cursor']);
    const role = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/roles',
      payload: { name: 'a\u0000b', permissions: [] },
    });
    assert.deepEqual(fields(role), ['name']);
    const list = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: '/api/settings/security',
      payload: { ip_allowlist: ['127.0.0.1', '\u0000'] },
    });
    assert.deepEqual(fields(list), ['ip_allowlist[1]']);
    assert.deepEqual(
      (await ta.db.selectFrom('roles').select('name').execute()).map((r) => r.name),
      ['admin'],
    );
    // A bad %-escape and an over-long path parameter failed before routing with Fastify's own
    // application/json answer (400 and 414).
    assert.deepEqual(fields(await get('/api/roles/%zz')), ['url']);
    assert.deepEqual(fields(await get(`/api/roles/${'a'.repeat(201)}`)), ['path']);
    // Just below the router's limit, the schema's own limit answers (maxLength 100).
    assert.deepEqual(fields(await get(`/api/roles/${'a'.repeat(150)}`)), ['id']);
  });

  test("with the owner's session: no 5xx, every error is a well-formed problem the document declares", async (t) => {
    const f = await fixture(t, engine);
    let token = f.ta.ownerToken;
    let portalToken = f.portal.token;
    const { requests, seen } = await fuzzAll(
      f,
      'session',
      (o) => (o.portal ? portalToken : token),
      async (o, res) => {
        // Likewise for the portal user's session.
        if (o.id === 'portalLogout' && res.statusCode === 204) {
          await f.ta.db.deleteFrom('login_failures').execute();
          portalToken = await login(f.ta.app, f.portal.email, f.portal.password);
        }
        // Logging out ends the fuzzer's session: log in again (clearing the failed logins the
        // login fuzzing piled up, so the throttle does not refuse the owner).
        if (o.id === 'logout' && res.statusCode === 204) {
          await f.ta.db.deleteFrom('login_failures').execute();
          token = await login(f.ta.app, OWNER.email, OWNER.password);
        }
      },
    );
    assert.ok(requests >= f.ops.length * RUNS);
    for (const [id, counts] of Object.entries(histogram(seen))) t.diagnostic(`${id}: ${counts.join(' ')}`);
    // The server kept its own invariants through all of it.
    const owner = await f.ta.db
      .selectFrom('operators')
      .select(['status', 'email'])
      .where('id', '=', f.ta.ownerId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(owner, { status: 'active', email: OWNER.email });
  });

  test('with an API key holding every scope: no 5xx, every error is a well-formed problem the document declares', async (t) => {
    const f = await fixture(t, engine);
    const key = await newApiKey(f.ta, [...ALL_PERMISSIONS], { name: 'fuzzer' });
    const { requests, seen } = await fuzzAll(
      f,
      'api key',
      (o) => (o.portal ? f.portal.key : key.secret),
      async () => {},
    );
    assert.ok(requests >= f.ops.length * RUNS);
    for (const [id, counts] of Object.entries(histogram(seen))) t.diagnostic(`${id}: ${counts.join(' ')}`);
    const row = await f.ta.db
      .selectFrom('api_keys')
      .select('revoked_at')
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.revoked_at, null);
  });

  test('any spelling of a path, without a credential or with a view-only key: never a 2xx the credential does not allow', async (t) => {
    const f = await fixture(t, engine);
    const viewKey = await newApiKey(
      f.ta,
      ALL_PERMISSIONS.filter((p) => p.endsWith(':view')),
      { name: 'viewer' },
    );
    const writes = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
    let requests = 0;
    for (const o of f.ops) {
      const path = o.path.replace(/\{[^}]+\}/g, 'x1');
      const spelled = fc.record({
        // Which characters to percent-encode (letters, digits and -._~ only: slashes and dots
        // as segments are refused outright, and tested in route-walk.test.ts).
        encode: fc.array(fc.boolean(), { minLength: path.length, maxLength: path.length }),
        upperHex: fc.boolean(),
        trailingSlash: fc.boolean(),
        credential: fc.constantFrom('none', 'view'),
      });
      const property = fc.asyncProperty(spelled, async (s) => {
        const url =
          [...path]
            .map((c, i) => {
              if (!s.encode[i] || !/[A-Za-z0-9\-_.~]/.test(c)) return c;
              const hex = c.charCodeAt(0).toString(16);
              return `%${s.upperHex ? hex.toUpperCase() : hex}`;
            })
            .join('') + (s.trailingSlash ? '/' : '');
        const headers: Record<string, string> =
          s.credential === 'view' ? { authorization: `Bearer ${viewKey.secret}` } : {};
        const payload = writes.has(o.method) ? '{}' : undefined;
        if (payload) headers['content-type'] = 'application/json';
        const res = await f.ta.app.inject({ method: o.method as any, url, headers, ...(payload ? { payload } : {}) });
        requests++;
        const where = `${o.method} ${url} (${s.credential}) → ${res.statusCode} ${res.body.slice(0, 300)}`;
        assert.ok(res.statusCode < 500, where);
        if (o.isPublic || o.intake || o.path.startsWith('/api/postback/')) return;
        const allowed = s.credential === 'view' && !writes.has(o.method);
        if (!allowed) assert.ok(res.statusCode >= 400, `reached without the access it needs: ${where}`);
      });
      await fc.assert(property, { seed: SEED, numRuns: RUNS });
    }
    assert.ok(requests >= f.ops.length * RUNS);
  });
});
