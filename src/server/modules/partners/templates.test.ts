import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compilePath } from '../../distribution/template.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { buildTestApp, forEachDatabase, getJson } from '../../../../test/helpers.js';
import { json, type PartnerHandler, type ReceivedRequest } from '../../../../test/partner-server.js';

// The partner template library (GET /api/partners/templates): each template, with only a URL and
// a token filled in, is accepted by the integration validator and delivers a real lead to a
// loopback partner shaped like the CRMs it stands for; the lead id and the autologin URL are read back.

const TOKEN = 'crm-token-0123456789abcdef';

interface Shape {
  /** What the partner's API reads: method, where the token is, the lead's fields by its own names. */
  takes(r: ReceivedRequest): Record<string, string | null>;
  method: string;
  contentType: string | null;
  tokenHeader: string;
  fields: Record<string, string>; // its name → the intake field
  answer(id: string, autologin: string): unknown;
}

const COMMON = { first_name: 'first_name', last_name: 'last_name', email: 'email', phone: 'phone' };

// Written from the partners' side, independently of the templates.
const SHAPES: Record<string, Shape> = {
  'json-token-header': {
    method: 'POST',
    contentType: 'application/json',
    tokenHeader: 'api-key',
    takes: (r) => r.json,
    fields: {
      firstName: 'first_name',
      lastName: 'last_name',
      email: 'email',
      phone: 'phone',
      country: 'country',
      ip: 'ip',
      funnel: 'funnel',
      affSub1: 'sub_id1',
    },
    answer: (id, autologin) => ({ success: true, data: { leadId: id, autologinUrl: autologin } }),
  },
  'form-post': {
    method: 'POST',
    contentType: 'application/x-www-form-urlencoded',
    tokenHeader: 'x-api-key',
    takes: (r) => Object.fromEntries(new URLSearchParams(r.body)),
    fields: { ...COMMON, country_code: 'country', ip_address: 'ip', offer: 'funnel', sub1: 'sub_id1' },
    answer: (id, autologin) => ({ status: 'ok', lead_id: id, auto_login_url: autologin }),
  },
  'query-get': {
    method: 'GET',
    contentType: null,
    tokenHeader: 'x-auth-token',
    takes: (r) => Object.fromEntries(new URL(r.url, 'http://x').searchParams),
    fields: {
      fname: 'first_name',
      lname: 'last_name',
      email: 'email',
      phone: 'phone',
      country: 'country',
      ip: 'ip',
      funnel: 'funnel',
      aff_sub1: 'sub_id1',
    },
    answer: (id, autologin) => ({ result: { accepted: 1, id: Number(id), login_url: autologin } }),
  },
};

/** Answers like the CRM when the request has its shape and token; a 400 naming what is wrong otherwise. */
function crm(shape: Shape, lead: Record<string, unknown>): PartnerHandler {
  return (r, res) => {
    const wrong: string[] = [];
    if (r.method !== shape.method) wrong.push(`method ${r.method}`);
    if (shape.contentType && !String(r.headers['content-type']).startsWith(shape.contentType))
      wrong.push(`content-type ${r.headers['content-type']}`);
    if (r.headers[shape.tokenHeader] !== TOKEN) wrong.push(`token ${r.headers[shape.tokenHeader]}`);
    const got = shape.takes(r) ?? {};
    for (const [theirs, ours] of Object.entries(shape.fields))
      if (String(got[theirs]) !== String(lead[ours])) wrong.push(`${theirs}=${got[theirs]}`);
    if (wrong.length) return json(res, 400, { error: wrong.join(', ') });
    json(res, 200, shape.answer('4711', 'https://broker.example/autologin/4711'));
  };
}

forEachDatabase('Partner templates', (engine) => {
  test('every template, given a URL and a token, is accepted and delivers a lead with its autologin URL read back', async (t) => {
    const ta = await buildTestApp(t, engine);
    const templates = (await getJson(ta, '/api/partners/templates')).data as any[];
    assert.deepEqual(templates.map((x) => x.id).sort(), Object.keys(SHAPES).sort());
    for (const template of templates) {
      const shape = SHAPES[template.id];
      // The published example answer is read by the template's own paths.
      const example = JSON.parse(template.answer_example);
      for (const path of ['success_path', 'lead_id_path', 'autologin_path'])
        assert.ok(compilePath(template.integration[path])(example), `${template.id}: ${path}`);
      const lead = sampleLead({ funnel: 'bitcoin-era', sub_id1: 'sub-a' });
      const w = await makeWorld(t, ta, [
        {
          handler: crm(shape, lead),
          integration: {
            ...template.integration,
            headers: { [template.auth_header]: TOKEN },
          },
        },
      ]);
      const answer = await postLead(ta, w.token, lead);
      assert.equal(answer.statusCode, 201, answer.body);
      const delivered = answer.json();
      const detail = await getJson(ta, `/api/leads/${delivered.id}`);
      assert.equal(delivered.status, 'delivered', `${template.id}: ${JSON.stringify(detail.attempts)}`);
      assert.equal(delivered.autologin_url, 'https://broker.example/autologin/4711', template.id);
      assert.equal(w.partners[0].server!.received.length, 1);
      // Stored as an ordinary integration: its body format and paths as the template had them.
      const partner = await getJson(ta, `/api/partners/${w.partners[0].id}`);
      assert.equal(partner.integration.body_format, template.integration.body_format);
      assert.equal(partner.integration.autologin_path, template.integration.autologin_path);
    }
  });
});
