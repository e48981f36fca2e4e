// Rule 16, end to end: partners that quote a lead's email and phone back (as is, in capitals,
// URL-encoded, JSON-escaped, digits only, grouped), a postback that puts them in the sale status,
// exports searched by them. A caller without leads:contacts (a role without it, a key without the
// scope) finds none of those spellings in any answer: search, the lead detail, the CSV export,
// the audit log. A caller with it sees them as the partner wrote them.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { buildTestApp, call, forEachDatabase, newApiKey, newOperator, type Engine } from '../../../../test/helpers.js';
import { accepting, type PartnerHandler } from '../../../../test/partner-server.js';

const EMAIL = 'ada.lovelace@example.com';
const PHONE = '+4915123456789';

/**
 * Every spelling of the contacts that must not reach a caller without leads:contacts, lower
 * case (texts are lower-cased before the search, so "ADA.LOVELACE@EXAMPLE.COM" is caught too).
 * '15123456789' is inside every ungrouped notation of the phone (+49…, 49…, %2B49…, 0151…).
 */
const FORMS = [
  EMAIL,
  'ada.lovelace%40example.com',
  'ada.lovelace\\u0040example.com',
  '15123456789',
  '151 2345 6789',
  '151-2345-6789',
];

/** The raw answer of a partner that refuses the lead and quotes it, the way partners do. */
function quotingBody(email: string, phone: string): string {
  const digits = phone.replace(/\D/g, '');
  const n = digits.slice(2); // German numbers: "49", then the national number
  return (
    `{"error":"dup ${email.toUpperCase()} ${digits}",` +
    `"e":"${email.replace('@', '\\u0040')}","q":"?email=${encodeURIComponent(email)}&tel=${encodeURIComponent(phone)}",` +
    `"tel":"+49 ${n.slice(0, 3)} ${n.slice(3, 7)} ${n.slice(7)}","f":"0${n.slice(0, 3)}-${n.slice(3, 7)}-${n.slice(7)}"}`
  );
}

const quoting =
  (status: number): PartnerHandler =>
  (req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(quotingBody(req.json.email, req.json.phone));
  };

/** Every text the answer carries: the raw body, and for JSON each string in it (where "\u0040" is itself). */
function texts(res: LightMyRequestResponse): string {
  const strings: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'string') strings.push(v);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  if (String(res.headers['content-type']).startsWith('application/json')) walk(res.json());
  return [res.body, ...strings].join('\n').toLowerCase();
}

const leaked = (res: LightMyRequestResponse) => FORMS.filter((f) => texts(res).includes(f));

/**
 * Lead A: both partners refuse it, quoting it (its reason quotes them). Lead B: the first
 * partner refuses it, quoting it; the second takes it (its autologin URL carries the email
 * URL-encoded) and reports a sale status that quotes it. The owner exports searching by both.
 */
async function setup(t: TestContext, engine: Engine) {
  const ta = await buildTestApp(t, engine);
  const rejecting = await makeWorld(t, ta, [{ handler: quoting(409) }, { handler: quoting(200) }]);
  const delivering = await makeWorld(t, ta, [{ handler: quoting(422) }, { handler: accepting() }]);
  const a = await postLead(
    ta,
    rejecting.token,
    sampleLead({ email: EMAIL, phone: PHONE, campaign_id: rejecting.campaignId }),
  );
  assert.equal(a.statusCode, 201, a.body);
  assert.equal(a.json().status, 'rejected');
  const b = await postLead(
    ta,
    delivering.token,
    sampleLead({ email: 'Grace.Hopper@Example.com', phone: '+4915198765432', campaign_id: delivering.campaignId }),
  );
  assert.equal(b.statusCode, 201, b.body);
  assert.equal(b.json().status, 'delivered');
  const pb = await ta.app.inject({
    method: 'GET',
    url: `/api/postback/${delivering.partners[1].postbackToken}?lead_id=${b.json().id}&sale_status=${encodeURIComponent('call back: grace.hopper@example.com / 0151 98765432')}`,
  });
  assert.equal(pb.statusCode, 200, pb.body);
  for (const q of [EMAIL, '+49 151 2345 6789', 'Grace.Hopper@example.com']) {
    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/leads/export?q=${encodeURIComponent(q)}` }))
        .statusCode,
      200,
    );
  }

  const viewer = await newOperator(ta, ['leads:view', 'audit:view']);
  const reader = await newOperator(ta, ['leads:view', 'audit:view', 'leads:contacts']);
  const without = [viewer.token, (await newApiKey(ta, ['leads:view', 'audit:view'], { token: reader.token })).secret];
  const withContacts = [
    ta.ownerToken,
    reader.token,
    (await newApiKey(ta, ['leads:view', 'audit:view', 'leads:contacts'])).secret,
  ];
  const get = (url: string, token: string) => call(ta.app, token, { method: 'GET', url });
  return { ta, leadA: a.json().id as string, leadB: b.json().id as string, without, withContacts, get };
}

/** Lead B's contacts, spelled as its partners and the postback wrote them. */
const B_FORMS = [
  'grace.hopper@example.com',
  'grace.hopper%40example.com',
  'grace.hopper\\u0040example.com',
  '15198765432',
  '151 98765432',
  '151 9876 5432',
  '151-9876-5432',
];
const leakedB = (res: LightMyRequestResponse) => B_FORMS.filter((f) => texts(res).includes(f));

forEachDatabase('Contacts in partner answers (leads:contacts)', (engine) => {
  test('search rows: the reason, autologin URL and sale status quoting the contacts are masked without leads:contacts', async (t) => {
    const { without, withContacts, get } = await setup(t, engine);
    for (const token of without) {
      const res = await get('/api/leads/search', token);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(leaked(res), [], res.body);
      assert.deepEqual(leakedB(res), [], res.body);
      const [b, a] = res.json().data;
      assert.match(a.reason, /Every partner tried declined: .*dup a\*\*\*@example\.com 49\*+89/);
      assert.equal(a.email, 'a***@example.com');
      assert.match(b.autologin_url, /^https:\/\/broker\.example\/login\/P-\d+\?email=g\*\*\*@example\.com$/);
      assert.equal(b.sale_status, 'call back: g***@example.com / 49*********32');
    }
    for (const token of withContacts) {
      const res = await get('/api/leads/search', token);
      assert.deepEqual(leaked(res), FORMS, 'every spelling is there to be masked');
      assert.ok(texts(res).includes('grace.hopper%40example.com') && texts(res).includes('0151 98765432'));
    }
  });

  test('lead detail: the reason and every attempt (reason, response excerpt) are masked without leads:contacts', async (t) => {
    const { leadA, leadB, without, withContacts, get } = await setup(t, engine);
    for (const token of without) {
      for (const id of [leadA, leadB]) {
        const res = await get(`/api/leads/${id}`, token);
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(leaked(res), [], res.body);
        assert.deepEqual(leakedB(res), [], res.body);
      }
      const a = (await get(`/api/leads/${leadA}`, token)).json();
      assert.equal(a.attempts.length, 2);
      assert.equal(
        a.attempts[0].response_excerpt,
        '{"error":"dup a***@example.com 49*********89","e":"a***@example.com","q":"?email=a***@example.com&tel=%2B49*********89",' +
          '"tel":"+49*********89","f":"49*********89"}',
      );
      assert.match(a.attempts[0].reason, /^HTTP 409: \{"error":"dup a\*\*\*@example\.com 49\*+89"/);
    }
    for (const token of withContacts) {
      const res = await get(`/api/leads/${leadA}`, token);
      assert.deepEqual(leaked(res), FORMS);
      assert.equal(res.json().attempts[0].response_excerpt, quotingBody(EMAIL, PHONE));
    }
  });

  test('CSV export: no spelling of the contacts in the file without leads:contacts', async (t) => {
    const { without, withContacts, get } = await setup(t, engine);
    for (const token of without) {
      const res = await get('/api/leads/export', token);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(leaked(res), [], res.body);
      assert.deepEqual(leakedB(res), [], res.body);
      assert.ok(res.body.includes('dup a***@example.com 49*********89'), 'masked in place');
    }
    for (const token of withContacts) {
      const res = await get('/api/leads/export', token);
      assert.deepEqual(leaked(res), FORMS);
      assert.ok(texts(res).includes('grace.hopper%40example.com'));
    }
  });

  test('audit log: a postback quoting the contacts and exports searched by them are masked without leads:contacts', async (t) => {
    const { without, withContacts, get } = await setup(t, engine);
    for (const token of without) {
      const res = await get('/api/audit-log?limit=500', token);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(leaked(res), [], res.body);
      assert.deepEqual(leakedB(res), [], res.body);
      const entries = res.json().data as { action: string; details: any }[];
      const postback = entries.find((e) => e.action === 'lead.postback')!;
      assert.equal(postback.details.changes.sale_status.to, 'call back: g***@example.com / 49*********32');
      const searched = entries
        .filter((e) => e.action === 'lead.exported' && e.details.filters.q)
        .map((e) => e.details.filters.q);
      assert.deepEqual(searched, ['g***@example.com', '+49*********89', 'a***@example.com']);
    }
    for (const token of withContacts) {
      const res = await get('/api/audit-log?limit=500', token);
      const t2 = texts(res);
      assert.ok(
        t2.includes(EMAIL) &&
          t2.includes('+49 151 2345 6789') &&
          t2.includes('grace.hopper@example.com / 0151 98765432'),
      );
    }
  });
});
