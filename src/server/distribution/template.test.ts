import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, forEachDatabase, getJson } from '../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../test/distribution-world.js';

forEachDatabase('partner integration URLs', (engine) => {
  test("a lead's value never chooses the partner's scheme, host or port, even in an integration saved before that was checked", async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    const partner = w.partners[0];
    const port = new URL(partner.server!.url).port;
    // Written to the database as an older release could have stored it: WHATWG parsing reads
    // "http:\\x@…" as userinfo x and a host that is the lead's sub_id1.
    const row = await ta.db
      .selectFrom('partners')
      .select('integration')
      .where('id', '=', partner.id)
      .executeTakeFirstOrThrow();
    const integration = { ...JSON.parse(row.integration), url: `http:\\\\x@{{lead.sub_id1}}.:${port}/leads` };
    await ta.db
      .updateTable('partners')
      .set({ integration: JSON.stringify(integration) })
      .where('id', '=', partner.id)
      .execute();

    const res = await postLead(ta, w.token, sampleLead({ sub_id1: '127.0.0.1' }));
    assert.equal(res.statusCode, 201, res.body);
    assert.notEqual(res.json().status, 'delivered');
    assert.equal(partner.server!.received.length, 0, 'the lead chose no host');
    const lead = await getJson(ta, `/api/leads/${res.json().id}`);
    assert.equal(lead.attempts.length, 1);
    assert.equal(lead.attempts[0].outcome, 'error');
    assert.match(lead.attempts[0].reason, /scheme, host or port/);
  });
});
