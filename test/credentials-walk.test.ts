// A key never gains what only a person may do (issue 24, finding 1; contract rule 13): no route an
// API key can reach answers with a credential other than one the key itself just made.
//   - From the published schema: every 2xx answer with a credential-shaped field (a token, a
//     secret, a password, recovery codes) is public (signing in), session-only, or one of the
//     machine credentials below, each made by the very request that returns it. A new one fails
//     here until it is judged: a credential for a person (an operator's or a provider user's
//     sign-in, an invitation) belongs on a session-only route.
//   - Over HTTP: with a key holding every scope of the owner, every GET a key may call, on real
//     objects, never shows a secret that exists (sessions, keys, intake and postback tokens, a
//     webhook's signing secret, passwords).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALL_PERMISSIONS } from '../src/server/auth/permissions.js';
import { insertCampaign, insertFlow, insertLeads } from './fixtures.js';
import { buildTestApp, call, forEachDatabase, newApiKey, newOperator, OWNER } from './helpers.js';

const CREDENTIAL = /token|secret|password|recovery|api_?key/i;
/** Shown for telling credentials apart; a prefix is no secret. */
const NOT_SECRET = /_prefix$|_left$/;

/** Machine credentials a key may make, each returned once by the request that makes it. */
const KEYS_OWN_CREATIONS = [
  'POST /api/partners .postback_token',
  'POST /api/partners/{id}/rotate-postback-token .postback_token',
  'POST /api/traffic-providers .token',
  'POST /api/traffic-providers/{id}/rotate-token .token',
  'POST /api/webhooks .secret',
  'POST /api/webhooks/{id}/rotate-secret .secret',
];

type Schema = {
  type?: string | string[];
  $ref?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};

/** A string, or strings (recovery codes): what a credential is written in; objects are looked into instead. */
const holdsText = (s: Schema) => [s.type].flat().some((t) => t === 'string' || t === 'array');

/** The credential-shaped property paths of a response schema. */
function credentialFields(
  doc: Record<string, unknown>,
  schema: Schema | undefined,
  path = '',
  seen = new Set<Schema>(),
): string[] {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return [];
  seen.add(schema);
  if (schema.$ref) {
    const target = schema.$ref
      .split('/')
      .slice(1)
      .reduce<unknown>((o, k) => (o as Record<string, unknown>)?.[k], doc) as Schema;
    return credentialFields(doc, target, path, seen);
  }
  const out: string[] = [];
  for (const [k, v] of Object.entries(schema.properties ?? {})) {
    if (CREDENTIAL.test(k) && !NOT_SECRET.test(k) && holdsText(v)) out.push(`${path}.${k}`);
    out.push(...credentialFields(doc, v, `${path}.${k}`, seen));
  }
  for (const sub of [schema.items, ...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])])
    out.push(...credentialFields(doc, sub, path, seen));
  return out;
}

forEachDatabase('credentials reachable by a key', (engine) => {
  test('no operation open to API keys answers with a credential but the machine credentials it makes itself', async (t) => {
    const ta = await buildTestApp(t, engine);
    const doc = (await ta.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const keyReachable: string[] = [];
    const keyTakes: string[] = [];
    let personOnSessions = 0;
    for (const [path, ops] of Object.entries<
      Record<
        string,
        {
          security?: unknown[];
          'x-session-only'?: boolean;
          requestBody?: { content?: Record<string, { schema?: Schema }> };
          responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
        }
      >
    >(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const open = op['x-session-only'] || (Array.isArray(op.security) && op.security.length === 0);
        const takes = credentialFields(doc, op.requestBody?.content?.['application/json']?.schema).filter(
          (f) => !f.endsWith('.current_password'),
        );
        if (!open) keyTakes.push(...takes.map((f) => `${method.toUpperCase()} ${path} ${f}`));
        for (const [status, answer] of Object.entries(op.responses ?? {})) {
          if (!status.startsWith('2')) continue;
          const fields = credentialFields(doc, answer.content?.['application/json']?.schema);
          if (open) personOnSessions += fields.length;
          else keyReachable.push(...fields.map((f) => `${method.toUpperCase()} ${path} ${f}`));
        }
      }
    }
    assert.deepEqual([...new Set(keyReachable)].sort(), [...KEYS_OWN_CREATIONS].sort());
    // Nor does a key set a credential for a person: the one body open to keys that carries a
    // password refuses it to keys field by field (operators.test.ts "an API key with operators:edit
    // cannot set a password…"); anything else that takes one is for sessions.
    assert.deepEqual([...new Set(keyTakes)].sort(), ['PATCH /api/operators/{id} .password']);
    // Sign-in tokens, API keys, two-factor seeds and recovery codes: all there, behind sessions (or signing in).
    assert.ok(personOnSessions >= 5, `${personOnSessions} credential fields on session-only or sign-in routes`);
  });

  test('every GET a key may call, on real objects, shows no secret that exists', async (t) => {
    const ta = await buildTestApp(t, engine);
    const secrets: string[] = [ta.ownerToken, OWNER.password];
    const made = async (url: string, payload: Record<string, unknown>, field: string) => {
      const res = await call(ta.app, ta.ownerToken, { method: 'POST', url, payload });
      assert.ok(res.statusCode < 300, `${url}: ${res.statusCode} ${res.body}`);
      secrets.push(res.json()[field]);
      return res.json();
    };
    const provider = await made('/api/traffic-providers', { name: 'Affiliate' }, 'token');
    const partner = await made(
      '/api/partners',
      {
        name: 'Broker',
        integration: {
          method: 'POST',
          url: 'https://broker.example.test/leads',
          headers: { 'X-Api-Key': 'partner-header-secret-123' },
          body_template: { email: '{{lead.email}}' },
          success_path: 'ok',
          lead_id_path: 'id',
          autologin_path: 'url',
          timeout_ms: 5000,
        },
      },
      'postback_token',
    );
    secrets.push('partner-header-secret-123');
    await made(
      '/api/webhooks',
      { name: 'Hook', url: 'https://hooks.example.test/in', event_types: ['lead.received'] },
      'secret',
    );
    const other = await newOperator(ta, ['leads:view']);
    secrets.push(other.token, other.password);
    const key = await newApiKey(ta, [...ALL_PERMISSIONS]);
    secrets.push(key.secret, (await newApiKey(ta, ['leads:view'], { token: other.token })).secret);
    const flow = await insertFlow(ta.db, [partner.id]);
    const campaign = await insertCampaign(ta.db, provider.id, flow);
    const [lead] = await insertLeads(ta.db, [
      { traffic_provider_id: provider.id, campaign_id: campaign, flow_id: flow },
    ]);
    const ids: Record<string, string> = {
      partners: partner.id,
      'traffic-providers': provider.id,
      flows: flow,
      campaigns: campaign,
      leads: lead,
      operators: other.id,
      roles: other.roleId,
      'api-keys': key.id,
    };

    const gets = ta.app.routeTable.filter(
      (r) =>
        r.method === 'GET' &&
        r.url.startsWith('/api/') &&
        !r.hidden &&
        !r.access.sessionOnly &&
        !r.access.public &&
        !r.access.intake &&
        !r.access.postback &&
        !r.access.metrics,
    );
    assert.ok(gets.length > 30, `${gets.length} GET routes`);
    const leaks: string[] = [];
    for (const r of gets) {
      const module = r.url.split('/')[2];
      const url = r.url.replace(/:id\b/g, ids[module] ?? 'x1').replace(/:[A-Za-z_]+/g, 'x1');
      const res = await call(ta.app, key.secret, { method: 'GET', url });
      assert.ok(res.statusCode < 500, `${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      for (const s of secrets) if (res.body.includes(s)) leaks.push(`${url} shows ${s.slice(0, 8)}…`);
    }
    assert.deepEqual(leaks, []);
  });
});
