// Issue 26 (narrow roles): a search by a whole email or phone without leads:contacts is refused
// with a 400 naming the permission, instead of answering "0 leads"; names and ids still search,
// and callers holding leads:contacts find the lead. The export takes the same filters and says the same.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
} from '../../../../test/helpers.js';
import { insertLeads, insertLeadWorld } from '../../../../test/fixtures.js';
import { contactShape } from './search.js';

test('contactShape: an @ is an email, a dialable number a phone, names and lead ids neither', () => {
  assert.equal(contactShape(' ada@example.com '), 'email address');
  assert.equal(contactShape('ada@'), 'email address');
  for (const phone of ['+49 151 2345-678', '004915123456789', '+49 (151) 234.5678'])
    assert.equal(contactShape(phone), 'phone number', phone);
  for (const other of ['Ada', 'Ada Lovelace', '12345', 'example.com', '0b0c5a4e-7a8f-4d3c-9e4b-5a2f1c3d4e5f'])
    assert.equal(contactShape(other), null, other);
});

forEachDatabase('Leads search by contact without leads:contacts', (engine) => {
  test('an email or phone search says leads:contacts is needed (session and key); with it the lead is found', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    const [id] = await insertLeads(ta.db, [
      {
        traffic_provider_id: w.providerA,
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: 'ada@example.com',
        phone: '+4915123456789',
      },
    ]);
    const viewer = await newOperator(ta, ['leads:view']);
    const reader = await newOperator(ta, ['leads:view', 'leads:contacts']);
    const viewKey = await newApiKey(ta, ['leads:view'], { token: reader.token });
    const get = (url: string, token: string) => call(ta.app, token, { method: 'GET', url });

    for (const [q, shape] of [
      ['ada@example.com', 'email address'],
      ['+49 151 2345 6789', 'phone number'],
    ] as const) {
      const qs = `q=${encodeURIComponent(q)}`;
      for (const [token, holder] of [
        [viewer.token, /your role does not have/],
        [viewKey.secret, /this API key does not have/],
      ] as const) {
        for (const path of ['/api/leads/search', '/api/leads/export']) {
          const res = await get(`${path}?${qs}`, token);
          expectProblem(res, 400, 'validation_failed');
          const [error, ...more] = res.json().errors;
          assert.deepEqual(more, [], res.body);
          assert.equal(error.field, 'q');
          assert.match(error.message, new RegExp(`^is a whole ${shape}: .*needs the permission leads:contacts`));
          assert.match(error.message, holder);
        }
      }
      // Every bad parameter is named at once: the contact and a bad status together.
      const both = await get(`/api/leads/search?${qs}&status=nope`, viewer.token);
      assert.deepEqual(
        both
          .json()
          .errors.map((e: { field: string }) => e.field)
          .sort(),
        ['q', 'status'],
      );
      for (const token of [reader.token, ta.ownerToken]) {
        const res = await get(`/api/leads/search?${qs}`, token);
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(
          res.json().data.map((r: { id: string }) => r.id),
          [id],
        );
      }
    }
    // Names and lead ids need no leads:contacts.
    for (const q of ['Ada', 'ada lovelace', id]) {
      const res = await get(`/api/leads/search?q=${encodeURIComponent(q)}`, viewer.token);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(
        res.json().data.map((r: { id: string }) => r.id),
        [id],
        q,
      );
    }
  });
});
