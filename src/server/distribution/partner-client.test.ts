import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { TEST_PARTNER_NETWORKS, until } from '../../../test/helpers.js';
import {
  accepting,
  defaultIntegration,
  downUrl,
  json,
  malformed,
  rejecting,
  slow,
  startPartner,
  type PartnerHandler,
} from '../../../test/partner-server.js';
import { MAX_ANSWER_BYTES, type LeadForPartner, type StoredIntegration } from './integrations/types.js';
import { buildPartnerRequest, createPartnerClient, SHOWN_ANSWER_BYTES } from './partner-client.js';

// The partner HTTP client against real loopback HTTP servers: what is sent, how answers are read.
// No database: the client never touches one.

const LEAD: LeadForPartner = {
  id: '01930000-0000-7000-8000-000000000001',
  first_name: 'Zoë',
  last_name: 'Müller',
  email: 'zoe+test@example.com',
  phone: '+49 151 1234567',
  country: 'DE',
  ip: '203.0.113.7',
  language: 'de',
  funnel: null,
  sub_id1: 'aff 1&2',
  sub_id2: null,
  sub_id3: null,
  sub_id4: null,
  sub_id5: null,
};

const integration = (url: string, extra: Partial<StoredIntegration> = {}) =>
  defaultIntegration(url, extra) as StoredIntegration;

function client(t: TestContext) {
  // The partners below listen on loopback, which the outbound guard lets through only on purpose.
  const c = createPartnerClient({ allowedNetworks: TEST_PARTNER_NETWORKS.split(',') });
  t.after(() => c.close());
  return c;
}

/** A partner answering each call with the next of `answers` ([status, body]; a string body is sent as is). */
const answering =
  (answers: [number, unknown][]): PartnerHandler =>
  (_req, res) => {
    const [status, body] = answers.shift()!;
    if (typeof body === 'string') {
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(body);
    } else json(res, status, body);
  };

test('accepted: the request is rendered and sent as configured, and the answer read', async (t) => {
  const partner = await startPartner(t, accepting());
  const c = client(t);
  const call = await c.call(
    integration(`${partner.url}?aff={{lead.sub_id1}}&f={{lead.funnel}}`, {
      headers: {
        'X-Api-Key': 'partner-secret-key-123456',
        'Content-Type': 'application/vnd.broker+json',
        Host: 'evil.example',
        'Content-Length': '1',
      },
      body_template: {
        email: '{{lead.email}}',
        name: '{{lead.first_name}} {{lead.last_name}}',
        funnel: '{{lead.funnel}}',
        note: 'funnel=[{{lead.funnel}}]',
        nested: { list: ['{{lead.country}}', 7, true, null, { ip: '{{lead.ip}}' }] },
        constant: 'x',
      },
    }),
    LEAD,
  );
  assert.equal(call.outcome, 'accepted', call.reason ?? '');
  assert.equal(call.reason, null);
  assert.match(call.partner_lead_id!, /^P-\d+$/);
  assert.equal(
    call.autologin_url,
    `https://broker.example/login/${call.partner_lead_id}?email=zoe%2Btest%40example.com`,
  );
  assert.equal(call.response?.status, 200);
  assert.equal(call.response?.truncated, false);
  assert.equal(JSON.parse(call.response!.body).data.id, call.partner_lead_id);
  assert.ok(call.duration_ms >= 0 && call.duration_ms < 2000);

  const [got] = partner.received;
  assert.equal(partner.received.length, 1);
  assert.equal(got.method, 'POST');
  // URL placeholders are URL-encoded; a null field is empty.
  assert.equal(got.url, '/leads?aff=aff%201%262&f=');
  assert.equal(got.headers['x-api-key'], 'partner-secret-key-123456');
  // The operator's Content-Type wins (and is the only one); Host and Content-Length are the client's.
  assert.equal(got.headers['content-type'], 'application/vnd.broker+json');
  assert.equal(got.headers.host, new URL(partner.url).host);
  assert.equal(got.headers['content-length'], String(Buffer.byteLength(got.body)));
  assert.deepEqual(got.json, {
    email: 'zoe+test@example.com',
    name: 'Zoë Müller',
    funnel: null,
    note: 'funnel=[]',
    nested: { list: ['DE', 7, true, null, { ip: '203.0.113.7' }] },
    constant: 'x',
  });
  // What the call reports as sent is what was sent.
  assert.equal(call.request.body, got.body);
  assert.equal(call.request.url, `${partner.url}?aff=aff%201%262&f=`);
  assert.deepEqual(call.request.headers, {
    'X-Api-Key': 'partner-secret-key-123456',
    'Content-Type': 'application/vnd.broker+json',
  });
});

test('buildPartnerRequest: JSON content type unless the operator sets one; PUT carries the body', () => {
  const req = buildPartnerRequest(
    integration('https://p.example/x/{{lead.country}}', { method: 'PUT', body_template: { id: '{{lead.id}}' } }),
    LEAD,
  );
  assert.deepEqual(req, {
    method: 'PUT',
    url: 'https://p.example/x/DE',
    headers: { 'content-type': 'application/json', 'X-Api-Key': 'partner-secret-key-123456' },
    body: JSON.stringify({ id: LEAD.id }),
  });
  // A template key "__proto__" is sent as a key, not swallowed as a prototype.
  const proto = buildPartnerRequest(
    integration('https://p.example/', { body_template: JSON.parse('{"__proto__":{"a":"{{lead.email}}"}}') }),
    LEAD,
  );
  assert.equal(proto.body, '{"__proto__":{"a":"zoe+test@example.com"}}');
});

test('GET: top-level template values go into the query string, no body is sent', async (t) => {
  const partner = await startPartner(t, accepting());
  const call = await client(t).call(
    integration(`${partner.url}?source=lg`, {
      method: 'GET',
      body_template: {
        email: '{{lead.email}}',
        aff: '{{lead.sub_id1}}',
        lang: '{{lead.language}}',
        missing: '{{lead.sub_id2}}',
        n: 5,
        ok: false,
        deep: { x: 1 },
      },
    }),
    LEAD,
  );
  assert.equal(call.outcome, 'accepted', call.reason ?? '');
  const [got] = partner.received;
  assert.equal(got.method, 'GET');
  assert.equal(got.body, '');
  assert.equal(got.headers['content-type'], undefined);
  const q = new URL(got.url, 'http://x').searchParams;
  // null leaves the parameter out; nested values have no query-string form.
  assert.deepEqual(
    [...q],
    [
      ['source', 'lg'],
      ['email', 'zoe+test@example.com'],
      ['aff', 'aff 1&2'],
      ['lang', 'de'],
      ['n', '5'],
      ['ok', 'false'],
    ],
  );
  assert.equal(call.request.body, null);
});

test('rejected: non-2xx, a false success flag, a missing or non-URL autologin', async (t) => {
  const partner = await startPartner(t, rejecting(400, 'email is invalid'));
  const c = client(t);
  const http400 = await c.call(integration(partner.url), LEAD);
  assert.equal(http400.outcome, 'rejected');
  assert.equal(http400.reason, 'HTTP 400: {"success":false,"error":"email is invalid"}');
  assert.equal(http400.response?.status, 400);

  const soft = await startPartner(t, rejecting());
  const no = await c.call(integration(soft.url), LEAD);
  assert.equal(no.outcome, 'rejected');
  assert.equal(no.reason, 'success is false at "success" (error: duplicate in broker CRM)');
  assert.equal(no.autologin_url, null);

  const answers: [number, unknown][] = [
    [200, { success: true, data: { id: 77 } }],
    [200, { success: true, data: { id: 'A1', autologin_url: 'javascript:alert(1)' } }],
    [200, { success: true, data: { id: 'A2', autologin_url: 'broker.example/login' } }],
    [503, 'x'.repeat(500)],
    [200, { status: 'FAILED', errors: [{ message: 'country not served' }] }],
    [200, { status: { ok: 0 } }],
  ];
  const moved = await startPartner(t, (_req, res) => {
    res.writeHead(301, { location: 'https://partner.example/leads' });
    res.end();
  });
  const redirect = await c.call(integration(moved.url), LEAD);
  assert.equal(redirect.outcome, 'rejected');
  assert.equal(redirect.reason, 'HTTP 301 (redirects to https://partner.example/leads): (empty answer)');
  assert.equal(moved.received.length, 1, 'not followed');

  const shaped = await startPartner(t, answering(answers));
  const noLink = await c.call(integration(shaped.url), LEAD);
  assert.equal(noLink.outcome, 'rejected');
  assert.equal(noLink.reason, 'no autologin URL at data.autologin_url');
  assert.equal(noLink.partner_lead_id, '77'); // numbers become strings
  const js = await c.call(integration(shaped.url), LEAD);
  assert.equal(js.reason, 'autologin value at data.autologin_url is not an http(s) URL: "javascript:alert(1)"');
  assert.equal(js.autologin_url, null);
  const relative = await c.call(integration(shaped.url), LEAD);
  assert.match(relative.reason!, /not an http\(s\) URL: "broker\.example\/login"$/);
  const long = await c.call(integration(shaped.url), LEAD);
  assert.equal(long.reason, `HTTP 503: ${'x'.repeat(200)}…`);
  const failed = await c.call(integration(shaped.url, { success_path: 'status', autologin_path: '' }), LEAD);
  assert.equal(failed.reason, 'success is "FAILED" at "status" (error: country not served)');
  const missing = await c.call(integration(shaped.url, { success_path: 'status.okay', autologin_path: '' }), LEAD);
  assert.equal(missing.reason, 'no success value at "status.okay"');
});

test('the success flag: what counts as yes', async (t) => {
  const yes = [true, 1, -1, 'yes', 'OK', 'true', 'accepted'];
  const no = [false, 0, '0', 'false', 'No', 'ERROR', 'fail', 'Failed', '', ' ', null, {}, ['x']];
  const answers: [number, unknown][] = [...yes, ...no].map((v) => [
    200,
    { result: [{ ok: v, link: 'https://b.example/a' }] },
  ]);
  const partner = await startPartner(t, answering(answers));
  const c = client(t);
  // Array indexes in paths: "result.0.ok".
  const paths = { success_path: 'result.0.ok', lead_id_path: 'result.0.id', autologin_path: 'result.0.link' };
  for (const v of yes) {
    const call = await c.call(integration(partner.url, paths), LEAD);
    assert.equal(call.outcome, 'accepted', JSON.stringify(v));
    assert.equal(call.autologin_url, 'https://b.example/a');
    assert.equal(call.partner_lead_id, null); // lead_id_path set but absent: no id, still accepted
  }
  for (const v of no)
    assert.equal((await c.call(integration(partner.url, paths), LEAD)).outcome, 'rejected', JSON.stringify(v));
});

test('an answer that is not JSON: rejected when paths are set, accepted when none is', async (t) => {
  const partner = await startPartner(t, malformed());
  const c = client(t);
  const bad = await c.call(integration(partner.url), LEAD);
  assert.equal(bad.outcome, 'rejected');
  assert.equal(bad.reason, 'answer is not JSON: {"success": tru');
  assert.equal(bad.response?.body, '{"success": tru');
  const plain = await c.call(
    integration(partner.url, { success_path: '', lead_id_path: '', autologin_path: '' }),
    LEAD,
  );
  assert.equal(plain.outcome, 'accepted');
  assert.equal(plain.reason, null);
});

test('timeout: a partner that does not answer in time is given up on at timeout_ms', async (t) => {
  const partner = await startPartner(t, slow(2000));
  const c = client(t);
  const started = Date.now();
  const call = await c.call(integration(partner.url, { timeout_ms: 300 }), LEAD);
  const took = Date.now() - started;
  assert.equal(call.outcome, 'timeout');
  assert.equal(call.reason, 'no answer within 300 ms');
  assert.equal(call.response, null);
  assert.ok(took >= 290 && took < 1500, `took ${took} ms`);
  assert.ok(call.duration_ms >= 290 && call.duration_ms < 1500, `duration_ms ${call.duration_ms}`);

  // The deadline covers the body too: headers sent at once, the body trickling forever.
  const trickle = await startPartner(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"success":');
    const timer = setInterval(() => res.write(' '), 50);
    res.on('close', () => clearInterval(timer));
  });
  const slowBody = await c.call(integration(trickle.url, { timeout_ms: 400 }), LEAD);
  assert.equal(slowBody.outcome, 'timeout');
  assert.equal(slowBody.reason, 'answer not complete within 400 ms (HTTP 200)');
  assert.equal(slowBody.response?.status, 200);
  assert.equal(slowBody.response?.truncated, true);
  assert.match(slowBody.response!.body, /^\{"success": *$/);
  assert.ok(slowBody.duration_ms < 1500, `duration_ms ${slowBody.duration_ms}`);
});

test('connection errors: refused, and closed without an answer', async (t) => {
  const c = client(t);
  const down = await c.call(integration(await downUrl()), LEAD);
  assert.equal(down.outcome, 'error');
  assert.equal(down.reason, 'connection refused (ECONNREFUSED)');
  assert.equal(down.response, null);

  const hangup = await startPartner(t, (_req, res) => {
    res.socket?.destroy();
  });
  const reset = await c.call(integration(hangup.url), LEAD);
  assert.equal(reset.outcome, 'error');
  assert.match(reset.reason!, /^connection (reset|closed) by the partner \((ECONNRESET|UND_ERR_SOCKET)\)$/);
});

test('a huge answer is read up to 1 MiB and shown up to 64 KiB', async (t) => {
  // 64 MiB of 2-byte characters, written as the client reads: cuts fall inside characters, and
  // the amount written shows whether the client hung up or read it all.
  const chunk = Buffer.alloc(64 * 1024, 'é');
  const written: number[] = [];
  const partner = await startPartner(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    let sent = 0;
    const pump = () => {
      while (sent < 64 * 1024 * 1024 && !res.destroyed) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    res.on('close', () => written.push(sent));
    pump();
  });
  const c = client(t);
  const plain = await c.call(
    integration(partner.url, { success_path: '', lead_id_path: '', autologin_path: '' }),
    LEAD,
  );
  assert.equal(plain.outcome, 'accepted');
  assert.equal(plain.response?.truncated, true);
  assert.ok(Buffer.byteLength(plain.response!.body) <= SHOWN_ANSWER_BYTES);
  assert.ok(Buffer.byteLength(plain.response!.body) > SHOWN_ANSWER_BYTES - 4);
  assert.ok(!plain.response!.body.includes('\ufffd'), 'no broken character at the cut');
  const withPaths = await c.call(integration(partner.url), LEAD);
  assert.equal(withPaths.outcome, 'rejected');
  assert.equal(withPaths.reason, 'answer is larger than 1 MiB: not read in full');
  // Wait for the partner to see both connections close (the client hung up), not for a fixed time.
  await until(() => written.length >= 2, 'the partner to see both answers end');
  assert.equal(written.length, 2);
  for (const n of written) assert.ok(n < 16 * MAX_ANSWER_BYTES, `the client read ${n} bytes before hanging up`);
});

test('keep-alive: sequential calls to a partner share one connection', async (t) => {
  let connections = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => json(res, 200, { success: true }));
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/leads`;
  const c = client(t);
  const send = async () => {
    const call = await c.call(integration(url, { lead_id_path: '', autologin_path: '' }), LEAD);
    assert.equal(call.outcome, 'accepted', call.reason ?? '');
  };
  // As deliveries go: the engine records each answer before the next call.
  for (let i = 0; i < 5; i++) {
    await send();
    await new Promise((r) => setImmediate(r));
  }
  assert.equal(connections, 1);
  // Back to back, undici marks a connection free one tick after its answer ends, so the next
  // call may open a second one; the pool still does not grow beyond that.
  for (let i = 0; i < 20; i++) await send();
  assert.ok(connections <= 2, `${connections} connections`);
});
