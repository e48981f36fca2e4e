// The OpenAPI document and Swagger UI (API-CONTRACT.md rule 11) are generated from the running
// server's own routes and describe exactly its behaviour. These tests walk the route table the
// server registered and hold the served /api/openapi.json against it. The schema does not
// depend on the storage engine, but building the app is cheap, so it runs on each engine.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import Fastify, { type FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ALL_PERMISSIONS } from '../src/server/auth/permissions.js';
import { installAuth } from '../src/server/auth/guard.js';
import { installErrorHandlers, ProblemSchema } from '../src/server/http/errors.js';
import { installRouteRules } from '../src/server/http/openapi.js';
import type { RouteInfo } from '../src/server/types.js';
import { validatorCompiler } from '../src/server/http/validation.js';
import { ApiKey } from '../src/server/modules/api-keys/schemas.js';
import type { App } from '../src/server/types.js';
import { insertAttempt, insertCampaign, insertLeads, insertPartner, insertTrafficProvider } from './fixtures.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  newPortalUser,
  OWNER,
  type TestApp,
} from './helpers.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
const PROBLEM_REF = '#/components/schemas/Problem';

/** Fastify `/api/roles/:id` → OpenAPI `/api/roles/{id}`. */
const oasPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

async function servedDocument(ta: TestApp) {
  const res = await ta.app.inject({ method: 'GET', url: '/api/openapi.json' }); // no credentials
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  return res.json();
}

function operationsOf(doc: any) {
  const ops: { method: string; path: string; op: any }[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (HTTP_METHODS.has(method)) ops.push({ method: method.toUpperCase(), path, op });
    }
  }
  return ops;
}

/** Everything wrong with one documented operation, as readable lines. */
function operationProblems(route: RouteInfo, op: any): string[] {
  const where = `${route.method} ${route.url}`;
  const out: string[] = [];
  const a = route.access;
  if (typeof op.operationId !== 'string' || !op.operationId) out.push(`${where}: no operationId`);
  if (!Array.isArray(op.tags) || !op.tags.length || !op.tags.every((t: unknown) => typeof t === 'string' && t))
    out.push(`${where}: no tags`);
  if (typeof op.summary !== 'string' || !op.summary.trim()) out.push(`${where}: no summary`);

  // Permission marking, exactly as rule 11 says.
  if (a.intake || a.postback) {
    // Machine tokens: the marking names the token, and the intake token has its own scheme.
    const marking = a.intake ? 'intake-token' : 'postback-token';
    if (op['x-permission'] !== marking) out.push(`${where}: x-permission ${op['x-permission']} but takes a ${marking}`);
    const security = JSON.stringify(op.security);
    if (a.intake && security !== JSON.stringify([{ intakeToken: [] }]))
      out.push(`${where}: intake route with security ${security}`);
    if (a.postback && security !== '[]')
      out.push(`${where}: postback route (token in the path) with security ${security}`);
    for (const status of ['401', '403'])
      if (!op.responses?.[status]) out.push(`${where}: token-guarded but declares no ${status}`);
  } else if (a.public) {
    if (!Array.isArray(op.security) || op.security.length !== 0)
      out.push(`${where}: public but security is ${JSON.stringify(op.security)}, not []`);
    if (op['x-permission'] !== undefined || op['x-session-only'] !== undefined)
      out.push(`${where}: public but marked x-permission/x-session-only`);
  } else {
    if (Array.isArray(op.security) && op.security.length === 0)
      out.push(`${where}: protected but security: [] (public)`);
    if (a.sessionOnly && op['x-session-only'] !== true) out.push(`${where}: session-only without x-session-only: true`);
    if (!a.sessionOnly && op['x-session-only'] !== undefined)
      out.push(`${where}: open to keys but marked x-session-only`);
    if (a.permission) {
      if (op['x-permission'] !== a.permission)
        out.push(`${where}: x-permission ${op['x-permission']} but needs ${a.permission}`);
      if (!(ALL_PERMISSIONS as string[]).includes(op['x-permission']))
        out.push(`${where}: x-permission ${op['x-permission']} is not in the vocabulary`);
    } else if (a.authenticated) {
      // Any valid credential: no module:action applies; the marking says so.
      if (op['x-permission'] !== 'authenticated')
        out.push(`${where}: open to any credential but x-permission is ${op['x-permission']}`);
    } else if (a.portal) {
      // A traffic provider's portal: its own scheme and the portal scope as the marking.
      if (op['x-permission'] !== a.portal) out.push(`${where}: portal route marked ${op['x-permission']}`);
      if (JSON.stringify(op.security) !== JSON.stringify([{ portalAuth: [] }]))
        out.push(`${where}: portal route with security ${JSON.stringify(op.security)}`);
    } else if (!a.sessionOnly) {
      out.push(`${where}: neither public, session-only, nor permission-guarded`);
    }
    for (const status of ['401', '403'])
      if (!op.responses?.[status]) out.push(`${where}: protected but declares no ${status}`);
  }

  // Success: at least one 2xx; each has an application/json schema (204: no content at all), or,
  // for a download (the leads CSV export, a database backup), exactly one file media type with its schema.
  const responses = Object.entries<any>(op.responses ?? {});
  const successes = responses.filter(([s]) => /^2\d\d$/.test(s));
  if (!successes.length) out.push(`${where}: no 2xx response`);
  for (const [status, resp] of successes) {
    if (status === '204') {
      if (resp.content) out.push(`${where}: 204 declares content`);
    } else if (!resp.content?.['application/json']?.schema && !isDownload(resp)) {
      out.push(`${where}: ${status} has no application/json schema (nor a single file media type with one)`);
    }
  }

  // Input: declared 400, and every path parameter of the URL is a declared parameter.
  const params: any[] = op.parameters ?? [];
  if ((params.length || op.requestBody) && !op.responses?.['400'])
    out.push(`${where}: takes input but declares no 400`);
  for (const name of route.url.match(/:([A-Za-z0-9_]+)/g) ?? []) {
    if (!params.some((p) => p.in === 'path' && p.name === name.slice(1) && p.required === true))
      out.push(`${where}: path parameter ${name} not declared`);
  }
  // A parameter the server fills in by default is not required of the caller.
  for (const p of params) {
    if (p.required && p.in !== 'path' && p.schema?.default !== undefined)
      out.push(`${where}: ${p.in} parameter ${p.name} has a default yet is marked required`);
  }

  // Every error answer is a Problem, as application/problem+json.
  for (const [status, resp] of responses.filter(([s]) => /^4\d\d$/.test(s))) {
    const content = resp.content ?? {};
    if (
      Object.keys(content).join() !== 'application/problem+json' ||
      content['application/problem+json'].schema?.$ref !== PROBLEM_REF
    ) {
      out.push(`${where}: ${status} is not a Problem under application/problem+json: ${JSON.stringify(content)}`);
    }
  }
  return out;
}

/** A 2xx answering one file media type (text/*, or a SQLite database) with a schema for it. */
const isDownload = (resp: any) => {
  const types = Object.keys(resp?.content ?? {});
  return types.length === 1 && /^(text\/|application\/vnd\.sqlite3$)/.test(types[0]) && !!resp.content[types[0]].schema;
};

/** Paths (like `data[0].secret`) of properties in `data` that `schema` does not declare. */
function undeclared(doc: any, schema: any, data: unknown, path = '$'): string[] {
  if (!schema) return [];
  if (schema.$ref)
    return undeclared(
      doc,
      schema.$ref
        .split('/')
        .slice(1)
        .reduce((o: any, k: string) => o[k], doc),
      data,
      path,
    );
  if (schema.anyOf) {
    const branch = schema.anyOf.find((s: any) => (data === null ? s.type === 'null' : s.type !== 'null'));
    return undeclared(doc, branch, data, path);
  }
  if (Array.isArray(data)) return data.flatMap((item, i) => undeclared(doc, schema.items, item, `${path}[${i}]`));
  if (data && typeof data === 'object') {
    if (schema.additionalProperties === true) return []; // declared free-form (e.g. audit details)
    // A declared map (additionalProperties: {schema}, e.g. a partner's headers): any key, checked against that schema.
    const map =
      schema.additionalProperties && typeof schema.additionalProperties === 'object'
        ? schema.additionalProperties
        : null;
    return Object.entries(data).flatMap(([k, v]) =>
      schema.properties && k in schema.properties
        ? undeclared(doc, schema.properties[k], v, `${path}.${k}`)
        : map
          ? undeclared(doc, map, v, `${path}.${k}`)
          : [`${path}.${k}`],
    );
  }
  return [];
}

const successSchema = (doc: any, path: string, method: string, status = '200') =>
  doc.paths[path][method].responses[status].content['application/json'].schema;

forEachDatabase('OpenAPI document', (engine) => {
  test('documents every route the server registers: id, tags, summary, permission marking, success and error answers', async (t) => {
    const ta = await buildTestApp(t, engine);
    const doc = await servedDocument(ta);
    const table = ta.app.routeTable;
    assert.ok(table.length > 20, 'the route table is filled at start-up');

    const problems: string[] = [];
    const known = new Set<string>();
    for (const route of table) {
      const key = `${route.method} ${oasPath(route.url)}`;
      if (route.hidden) {
        if (!(route.url === '/api/docs' || route.url.startsWith('/api/docs/') || !route.url.startsWith('/api'))) {
          problems.push(`${route.method} ${route.url}: hidden, but neither a docs asset nor outside /api`);
        }
        if (doc.paths[oasPath(route.url)]?.[route.method.toLowerCase()]) problems.push(`${key}: hidden yet documented`);
        continue;
      }
      if (!route.url.startsWith('/api/')) problems.push(`${key}: an API route outside /api/`);
      known.add(key);
      const op = doc.paths[oasPath(route.url)]?.[route.method.toLowerCase()];
      if (!op) problems.push(`${key}: registered but not in /api/openapi.json`);
      else problems.push(...operationProblems(route, op));
    }

    const ids = new Map<string, string>();
    for (const { method, path, op } of operationsOf(doc)) {
      if (!known.has(`${method} ${path}`))
        problems.push(`${method} ${path}: documented but the server has no such route`);
      if (ids.has(op.operationId))
        problems.push(`operationId ${op.operationId} repeats (${ids.get(op.operationId)} and ${method} ${path})`);
      ids.set(op.operationId, `${method} ${path}`);
    }
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      if (!path.startsWith('/api/')) problems.push(`${path}: documented outside /api/`);
      for (const k of Object.keys(item))
        if (!HTTP_METHODS.has(k) && k !== 'parameters') problems.push(`${path}: unexpected key ${k}`);
    }
    assert.deepEqual(problems, []);

    // Sanity: the walk above really saw the guarded, session-only and public operations.
    const markings = operationsOf(doc).map(({ op }): string =>
      op.security?.length === 0 ? 'public' : op['x-session-only'] ? 'session' : 'permission',
    );
    for (const kind of ['public', 'session', 'permission'])
      assert.ok(markings.includes(kind), `no ${kind} operation documented`);
    assert.equal(known.size, operationsOf(doc).length);
    // The 415 says what the body may be: forms too for a partner's postback, JSON elsewhere.
    assert.match(doc.paths['/api/postback/{token}'].post.responses['415'].description, /x-www-form-urlencoded/);
    assert.doesNotMatch(doc.paths['/api/partners'].post.responses['415'].description, /form/);
  });

  test('the served document is valid OpenAPI 3.1 and is the one Swagger UI shows', async (t) => {
    const ta = await buildTestApp(t, engine);
    const doc = await servedDocument(ta);
    assert.equal(doc.openapi, '3.1.0');
    // validate() dereferences in place: give it a copy.
    await SwaggerParser.validate(structuredClone(doc));
    // The parser really checks: a broken copy is refused.
    const broken = structuredClone(doc);
    broken.paths['/api/auth/login'].post.responses['200'].content['application/json'].schema = {
      $ref: '#/components/schemas/Nope',
    };
    await assert.rejects(SwaggerParser.validate(broken));

    const ui = await ta.app.inject({ method: 'GET', url: '/api/docs/json' });
    assert.equal(ui.statusCode, 200);
    assert.deepEqual(ui.json(), doc);
  });

  test('Swagger UI and the document are served without credentials, with a Bearer scheme to authorize with', async (t) => {
    const ta = await buildTestApp(t, engine);
    for (const url of ['/api/docs', '/api/docs/']) {
      const res = await ta.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, `${url}: ${res.statusCode}`);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /swagger-ui/i);
    }
    const init = await ta.app.inject({ method: 'GET', url: '/api/docs/static/swagger-initializer.js' });
    assert.equal(init.statusCode, 200);
    assert.match(
      init.body,
      /resolveUrl\(['"]\.\/json['"]\)|url: *['"][^'"]*json['"]/,
      'the UI loads the spec from /api/docs/json',
    );

    const uiSpec = await ta.app.inject({ method: 'GET', url: '/api/docs/json' });
    assert.equal(uiSpec.statusCode, 200);
    const spec = uiSpec.json();
    assert.deepEqual(
      {
        type: spec.components.securitySchemes.bearerAuth.type,
        scheme: spec.components.securitySchemes.bearerAuth.scheme,
      },
      { type: 'http', scheme: 'bearer' },
    );
    // Applied to every operation unless it opts out (public ones say security: []).
    assert.deepEqual(spec.security, [{ bearerAuth: [] }]);
    assert.equal(spec.paths['/api/roles'].get.security, undefined);

    // Without credentials the document is served, while a real operation is refused.
    await servedDocument(ta);
    expectProblem(await ta.app.inject({ method: 'GET', url: '/api/roles' }), 401, 'unauthorized');

    // "The allow-list still applies": an address outside it gets neither the document nor the UI.
    const set = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: '/api/settings/security',
      payload: { ip_allowlist: ['10.0.0.0/8'] },
      remoteAddress: '10.1.2.3',
    });
    assert.equal(set.statusCode, 200, set.body);
    for (const url of ['/api/openapi.json', '/api/docs', '/api/docs/json']) {
      expectProblem(await ta.app.inject({ method: 'GET', url }), 403, 'ip_not_allowed');
      assert.equal((await ta.app.inject({ method: 'GET', url, remoteAddress: '10.1.2.3' })).statusCode, 200, url);
    }
  });

  test('responses go through their declared schemas: no undeclared property reaches a client', async (t) => {
    const ta = await buildTestApp(t, engine);
    const doc = await servedDocument(ta);
    const other = await newOperator(ta, ['roles:view']);
    await newApiKey(ta, ['roles:view'], { name: 'first' });
    await newApiKey(ta, ['roles:view'], {
      name: 'second',
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    const ownerHash = (
      await ta.db.selectFrom('operators').select('password_hash').where('id', '=', ta.ownerId).executeTakeFirstOrThrow()
    ).password_hash;

    // No password hash in an operator, by id or in the login answer.
    const op = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/operators/${other.id}` });
    assert.equal(op.statusCode, 200);
    assert.equal('password_hash' in op.json(), false);
    assert.deepEqual(
      Object.keys(op.json()).sort(),
      Object.keys(successSchema(doc, '/api/operators/{id}', 'get').properties).sort(),
    );

    const loginRes = await ta.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: OWNER.email, password: OWNER.password },
    });
    assert.equal(loginRes.statusCode, 200);
    assert.equal('password_hash' in loginRes.json(), false);
    assert.equal('password_hash' in loginRes.json().operator, false);
    assert.ok(
      !loginRes.body.includes(ownerHash) &&
        !loginRes.body.includes('$argon2') &&
        !loginRes.body.includes(OWNER.password),
    );
    assert.deepEqual(undeclared(doc, successSchema(doc, '/api/auth/login', 'post'), loginRes.json()), []);

    // API keys: exactly the declared keys, never a secret or its hash.
    const keys = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/api-keys' });
    assert.equal(keys.statusCode, 200);
    const items = keys.json().data as Record<string, unknown>[];
    assert.equal(items.length, 2);
    const itemSchema = successSchema(doc, '/api/api-keys', 'get').properties.data.items;
    const declared = Object.keys(itemSchema.properties).sort();
    for (const item of items) assert.deepEqual(Object.keys(item).sort(), declared);
    assert.ok(!declared.includes('secret') && !declared.includes('secret_hash'));
    assert.ok(!/"secret|lg_[0-9A-Za-z]{20,}/.test(keys.body), 'no secret in the list');

    // Every readable GET, as the owner: nothing outside its declared schema, and the schema holds.
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    ajv.addSchema({ $id: 'doc', components: doc.components });
    // A flow with a scheduled target, so the list and the record show every part of one.
    const docFlow = (
      await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: '/api/flows',
        payload: {
          name: 'Doc flow',
          targets: [
            {
              partner_id: await insertPartner(ta.db),
              priority: 1,
              schedule: { timezone: 'Europe/Berlin', days: [1], from: '09:00', to: '17:00' },
            },
          ],
        },
      })
    ).json();
    const ids: Record<string, string> = {
      '/api/operators/{id}': other.id,
      '/api/roles/{id}': other.roleId,
      '/api/api-keys/{id}': items[0].id as string,
      // Made through the API, so the list and the record show what a real one looks like (masked headers).
      '/api/partners/{id}': (
        await call(ta.app, ta.ownerToken, {
          method: 'POST',
          url: '/api/partners',
          payload: {
            name: 'Doc partner',
            integration: { url: 'https://partner.example/leads', headers: { 'X-Api-Key': 'secret-value-1234' } },
          },
        })
      ).json().id,
      '/api/traffic-providers/{id}': (
        await call(ta.app, ta.ownerToken, {
          method: 'POST',
          url: '/api/traffic-providers',
          payload: { name: 'Doc provider' },
        })
      ).json().id,
      '/api/flows/{id}': docFlow.id,
      '/api/campaigns/{id}': (
        await call(ta.app, ta.ownerToken, {
          method: 'POST',
          url: '/api/campaigns',
          payload: {
            name: 'Doc campaign',
            traffic_provider_id: await insertTrafficProvider(ta.db),
            flow_id: docFlow.id,
            payout: { model: 'cpl', amount: 12.5 },
          },
        })
      ).json().id,
    };
    // A lead with a delivery attempt, so the lead record shows its attempts too.
    const [docLead] = await insertLeads(ta.db, [
      {
        traffic_provider_id: await insertTrafficProvider(ta.db),
        status: 'delivered',
        autologin_url: 'https://b.example/in',
      },
    ]);
    await insertAttempt(ta.db, { lead_id: docLead, partner_id: await insertPartner(ta.db), attempt_no: 1 });
    ids['/api/leads/{id}'] = docLead;
    // GETs whose parameters are not an id: a partner's postback (its token, a lead delivered to it).
    const pbPartner = (
      await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: '/api/partners',
        payload: { name: 'Postback partner', integration: { url: 'https://p.example/leads' } },
      })
    ).json();
    const [pbLead] = await insertLeads(ta.db, [
      { traffic_provider_id: await insertTrafficProvider(ta.db), status: 'delivered', partner_id: pbPartner.id },
    ]);
    const urls: Record<string, string> = {
      '/api/postback/{token}': `${pbPartner.postback_url}?lead_id=${pbLead}&sale_status=Doc&ftd=1&revenue=1`,
    };
    // A webhook with a delivery (an event it subscribes to), and a notification.
    const hook = (
      await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: '/api/webhooks',
        payload: { name: 'Doc hook', url: 'https://hooks.example/in/abcdef', event_types: ['partner.cap_full'] },
      })
    ).json();
    await ta.db
      .insertInto('events')
      .values({
        type: 'partner.cap_full',
        occurred_at: new Date().toISOString(),
        lead_id: null,
        partner_id: pbPartner.id,
        traffic_provider_id: null,
        campaign_id: null,
        data: '{"cap_kind":"daily","period":"2026-11-26","used":5,"cap":5,"flow_id":null}',
        dedupe_key: null,
      })
      .execute();
    // A provider with a postback, and a delivery of it.
    const pbProvider = (
      await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: '/api/traffic-providers',
        payload: { name: 'Postback provider' },
      })
    ).json();
    const put = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: `/api/traffic-providers/${pbProvider.id}/postbacks`,
      payload: {
        postbacks: [
          { event_type: 'lead.received', campaign_id: null, url: 'https://tracker.example/pb?click={sub_id1}' },
        ],
      },
    });
    assert.equal(put.statusCode, 200, put.body);
    await insertLeads(ta.db, [{ traffic_provider_id: pbProvider.id }]);
    await ta.app.events.fanOut();
    const delivery = await ta.db
      .selectFrom('event_deliveries')
      .select('id')
      .where('destination_kind', '=', 'webhook')
      .executeTakeFirstOrThrow();
    const pbDelivery = await ta.db
      .selectFrom('event_deliveries')
      .select('id')
      .where('destination_kind', '=', 'postback')
      .executeTakeFirstOrThrow();
    const pulled = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: `/api/partners/${pbPartner.id}/status-pull`,
      payload: {
        url: 'https://p.example/statuses?from={{from}}',
        request_headers: { 'X-Key': 'secret-value-9876' },
        lead_id_path: 'id',
        status_path: 'status',
        interval_minutes: 5,
        lookback_hours: 24,
      },
    });
    assert.equal(pulled.statusCode, 200, pulled.body);
    urls['/api/partners/{id}/status-pull'] = `/api/partners/${pbPartner.id}/status-pull`;
    urls['/api/traffic-providers/{id}/postbacks'] = `/api/traffic-providers/${pbProvider.id}/postbacks`;
    // A portal user of that provider with a key: the operator's view of them, and the portal's routes (its own token).
    const portalUser = await newPortalUser(ta, pbProvider.id);
    // One of its leads, with every field the portal can show shown (sale status, payout, masked contacts, an FTD past its hold).
    await ta.db
      .updateTable('traffic_providers')
      .set({ portal_sale_status: 1, portal_contacts: 1 })
      .where('id', '=', pbProvider.id)
      .execute();
    const [portalLead] = await insertLeads(ta.db, [
      {
        traffic_provider_id: pbProvider.id,
        status: 'delivered',
        sale_status: 'Deposit',
        ftd_at: '2026-01-01T00:00:00.000Z',
        sub_id1: 'doc',
        cost_cents: 1000,
      },
    ]);
    urls['/api/portal/leads/{id}'] = `/api/portal/leads/${portalLead}`;
    urls['/api/traffic-providers/{id}/users'] = `/api/traffic-providers/${pbProvider.id}/users`;
    urls['/api/traffic-providers/{id}/users/{user_id}/api-keys'] =
      `/api/traffic-providers/${pbProvider.id}/users/${portalUser.id}/api-keys`;
    urls['/api/traffic-providers/{id}/postbacks/deliveries'] =
      `/api/traffic-providers/${pbProvider.id}/postbacks/deliveries`;
    urls['/api/traffic-providers/{id}/postbacks/deliveries/{deliveryId}'] =
      `/api/traffic-providers/${pbProvider.id}/postbacks/deliveries/${pbDelivery.id}`;
    urls['/api/traffic-providers/{id}/portal'] = `/api/traffic-providers/${pbProvider.id}/portal`;
    // The portal's own: a campaign's intake docs, and a postback delivery of the provider.
    urls['/api/portal/campaigns/{id}/docs'] =
      `/api/portal/campaigns/${await insertCampaign(ta.db, pbProvider.id, null)}/docs`;
    urls['/api/portal/postbacks/deliveries/{deliveryId}'] = `/api/portal/postbacks/deliveries/${pbDelivery.id}`;
    ids['/api/webhooks/{id}'] = hook.id;
    const injection = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/injections',
      payload: { filter: {}, flow_id: docFlow.id, per_minute: 10 },
    });
    assert.equal(injection.statusCode, 201, injection.body);
    ids['/api/injections/{id}'] = injection.json().id;
    urls['/api/injections/{id}/report.csv'] = `/api/injections/${injection.json().id}/report.csv`;
    const rule = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/injection-rules',
      payload: {
        name: 'Doc rule',
        filter: { status: ['rejected'], last_days: 7 },
        flow_id: docFlow.id,
        per_minute: 10,
        schedule: { time_zone: 'Europe/Berlin', at: '10:00' },
      },
    });
    assert.equal(rule.statusCode, 201, rule.body);
    ids['/api/injection-rules/{id}'] = rule.json().id;
    const imported = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/imports?name=doc.csv',
      headers: { 'content-type': 'text/csv' },
      payload: 'email,phone\nx@example.com,+4915123456789\n',
    });
    assert.equal(imported.statusCode, 201, imported.body);
    ids['/api/imports/{id}'] = imported.json().id;
    urls['/api/imports/{id}/errors'] = `/api/imports/${imported.json().id}/errors`;
    urls['/api/imports/{id}/errors.csv'] = `/api/imports/${imported.json().id}/errors.csv`;
    const entry = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/blocklists',
      payload: { kind: 'email', value: 'blocked@example.com', note: 'doc' },
    });
    assert.equal(entry.statusCode, 201, entry.body);
    ids['/api/blocklists/{id}'] = entry.json().id;
    urls['/api/webhooks/{id}/deliveries'] = `/api/webhooks/${hook.id}/deliveries`;
    urls['/api/webhooks/{id}/deliveries/{deliveryId}'] = `/api/webhooks/${hook.id}/deliveries/${delivery.id}`;
    // A backup to list and download (SQLite only: on PostgreSQL the backup routes answer 409, tested in modules/hosting).
    if (engine === 'sqlite') {
      urls['/api/hosting/backups/{name}'] =
        `/api/hosting/backups/${(await call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/hosting/backups' })).json().name}`;
    }
    let checked = 0;
    for (const { method, path, op } of operationsOf(doc)) {
      if (method !== 'GET' || path.startsWith('/api/docs')) continue;
      if (engine === 'postgres' && path.startsWith('/api/hosting/backups')) continue;
      const url = urls[path] ?? (path.includes('{') ? path.replace(/\{id\}/, ids[path]) : path);
      assert.ok(!url.includes('{'), `no id for ${path}`);
      const portal = path.startsWith('/api/portal/');
      const res = await call(ta.app, portal ? portalUser.token : ta.ownerToken, { method: 'GET', url });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      if (isDownload(op.responses['200'])) {
        // A file (the leads CSV): sent as the media type it declares, with content.
        const type = Object.keys(op.responses['200'].content)[0];
        assert.ok(
          String(res.headers['content-type']).startsWith(type),
          `${url}: ${res.headers['content-type']} is not ${type}`,
        );
        assert.ok(res.body.length > 0, `${url}: empty download`);
        checked++;
        continue;
      }
      const schema = op.responses['200'].content['application/json'].schema;
      const validate = ajv.compile(
        JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')),
      );
      assert.ok(validate(res.json()), `${url}: ${JSON.stringify(validate.errors)}`);
      if (path !== '/api/openapi.json')
        assert.deepEqual(undeclared(doc, schema, res.json()), [], `${url} answers undeclared properties`);
      checked++;
    }
    assert.ok(checked >= 10, `only ${checked} GET operations checked`);
  });
});

// Start-up rules do not touch a database: a bare Fastify instance with the server's rules.
describe('Route rules at start-up (deny by default, document by construction)', () => {
  const documented = {
    operationId: 'listWidgets',
    tags: ['Widgets'],
    summary: 'Widgets',
    response: { 200: Type.Object({ ok: Type.Boolean() }) },
  };

  /** Registers routes on a bare instance carrying installRouteRules; the start-up error, or null. */
  async function startUp(register: (app: FastifyInstance) => void, table: RouteInfo[] = []): Promise<Error | null> {
    const app = Fastify({ logger: false, exposeHeadRoutes: false });
    app.setValidatorCompiler(validatorCompiler);
    app.addSchema(ProblemSchema);
    installRouteRules(app as unknown as App, table);
    let error: Error | null = null;
    try {
      register(app);
      await app.ready();
    } catch (err) {
      error = err as Error;
    }
    await app.close().catch(() => {});
    return error;
  }

  test('a well-formed route starts, with its problem answers added', async () => {
    const table: RouteInfo[] = [];
    const get: Record<string, any> = {
      ...documented,
      response: { ...documented.response },
      params: Type.Object({ id: Type.String() }),
    };
    const post: Record<string, any> = {
      ...documented,
      response: { ...documented.response },
      operationId: 'createWidget',
      body: Type.Object({}),
    };
    const err = await startUp((app) => {
      app.get('/api/widgets/:id', { config: { permission: 'roles:view' }, schema: get }, async () => ({ ok: true }));
      app.post('/api/widgets', { config: { permission: 'roles:edit' }, schema: post }, async () => ({ ok: true }));
      app.get('/not-api', { config: { public: true } }, async () => 'x');
    }, table);
    assert.equal(err, null);
    assert.deepEqual(
      table.map((r) => `${r.method} ${r.url} ${r.hidden}`),
      ['GET /api/widgets/:id false', 'POST /api/widgets false', 'GET /not-api true'],
    );
    assert.deepEqual(Object.keys(get.response).sort(), ['200', '400', '401', '403', '429', '503']);
    assert.deepEqual(Object.keys(post.response).sort(), ['200', '400', '401', '403', '413', '415', '429', '503']);
    assert.equal(get['x-permission'], 'roles:view');
    assert.equal(post['x-permission'], 'roles:edit');
  });

  test('a route that declares no access stops start-up, naming the route, outside /api too', async () => {
    const err = await startUp((app) => app.get('/api/widgets', { schema: documented }, async () => ({ ok: true })));
    assert.ok(err, 'start-up succeeded');
    assert.match(err.message, /GET \/api\/widgets declares no access/);
    const outside = await startUp((app) => app.get('/metrics-like', async () => 'x'));
    assert.match(String(outside?.message), /GET \/metrics-like declares no access/);
  });

  test('a handler reached without the guard granting its route refuses to run (deny by construction)', async (t) => {
    // The rules without installAuth: as if a hook were skipped. The handler must not run.
    const app = Fastify({ logger: false });
    app.addSchema(ProblemSchema);
    installErrorHandlers(app);
    installRouteRules(app as unknown as App, []);
    let ran = false;
    app.get('/api/widgets', { config: { public: true }, schema: documented }, async () => {
      ran = true;
      return { ok: true };
    });
    t.after(() => app.close());
    const res = await app.inject({ method: 'GET', url: '/api/widgets' });
    assert.equal(res.statusCode, 403);
    assert.equal(ran, false);
  });

  test('a write route that requires only a :view permission stops start-up', async () => {
    const err = await startUp((app) =>
      app.post('/api/widgets', { config: { permission: 'roles:view' }, schema: documented }, async () => ({
        ok: true,
      })),
    );
    assert.ok(err, 'start-up succeeded');
    assert.match(err.message, /POST \/api\/widgets is a write but requires only roles:view/);
  });

  test('a route without operationId, tags, summary or success response stops start-up', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...documented, operationId: undefined }, /GET \/api\/widgets has no operationId/],
      [{ ...documented, tags: undefined }, /GET \/api\/widgets has no tags/],
      [{ ...documented, summary: undefined }, /GET \/api\/widgets has no summary/],
      [{ ...documented, response: { 404: Type.Object({}) } }, /GET \/api\/widgets declares no success response/],
    ];
    for (const [schema, message] of cases) {
      const err = await startUp((app) =>
        app.get('/api/widgets', { config: { authenticated: true }, schema }, async () => ({ ok: true })),
      );
      assert.ok(err, `start-up succeeded for ${message}`);
      assert.match(err.message, message);
    }
  });

  test('the declared response schema is what gets serialized: an undeclared property is dropped', async (t) => {
    const app = Fastify({ logger: false });
    app.addSchema(ProblemSchema);
    installRouteRules(app as unknown as App, []);
    installAuth(app as unknown as App);
    const row = {
      id: 'k1',
      name: 'n',
      scopes: ['roles:view'],
      expires_at: null,
      created_at: '2026-01-01T00:00:00.000Z',
      last_used_at: null,
      revoked_at: null,
      status: 'active',
      prefix: 'lg_k1',
      operator_id: 'o1',
    };
    app.get(
      '/api/widgets',
      { config: { public: true, allowlistExempt: true }, schema: { ...documented, response: { 200: ApiKey } } },
      async () => ({ ...row, secret_hash: 'deadbeef', secret: 'lg_secretsecretsecret', password_hash: '$argon2id$x' }),
    );
    t.after(() => app.close());
    const res = await app.inject({ method: 'GET', url: '/api/widgets' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), row);
  });
});
