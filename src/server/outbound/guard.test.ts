import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { request } from 'undici';
import { startTrap } from '../../../test/loopback-trap.js';
import { defaultIntegration } from '../../../test/partner-server.js';
import {
  checkAddress,
  checkDestinationUrl,
  classifyAddress,
  createOutboundAgent,
  resolveDestination,
  type Lookup,
} from './guard.js';
import type { LeadForPartner, StoredIntegration } from '../distribution/integrations/types.js';
import { createPartnerClient } from '../distribution/partner-client.js';

// The outbound guard (contract rule 14): address rules as data, then the real client against
// real loopback servers, which must receive nothing when the guard refuses. No traffic leaves
// loopback: the non-loopback addresses below are only ever classified, never connected to.

const LEAD: LeadForPartner = {
  id: '01930000-0000-7000-8000-000000000002',
  first_name: 'Ada',
  last_name: 'L',
  email: 'ada@example.com',
  phone: '+4915112345678',
  country: 'DE',
  ip: '203.0.113.7',
  language: null,
  funnel: null,
  sub_id1: null,
  sub_id2: null,
  sub_id3: null,
  sub_id4: null,
  sub_id5: null,
};
const integration = (url: string) => ({ ...defaultIntegration(url), timeout_ms: 3000 }) as StoredIntegration;

function client(t: TestContext, allowedNetworks: string[]) {
  const c = createPartnerClient({ allowedNetworks });
  t.after(() => c.close());
  return c;
}

test('classifyAddress: the range of an address in every spelling, IPv4-mapped and embedded forms included', () => {
  const table: [string, string, string][] = [
    // spelling, canonical address, range
    ['127.0.0.1', '127.0.0.1', 'loopback'],
    ['2130706433', '127.0.0.1', 'loopback'],
    ['0x7f000001', '127.0.0.1', 'loopback'],
    ['127.1', '127.0.0.1', 'loopback'],
    ['0177.0.0.1', '127.0.0.1', 'loopback'],
    ['0x7f.1', '127.0.0.1', 'loopback'],
    ['017700000001', '127.0.0.1', 'loopback'],
    ['127.255.255.254', '127.255.255.254', 'loopback'],
    ['::1', '::1', 'loopback'],
    ['[::1]', '::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', '::1', 'loopback'],
    ['::ffff:127.0.0.1', '127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', '127.0.0.1', 'loopback'],
    ['[::ffff:127.0.0.1]', '127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', '169.254.169.254', 'linkLocal'],
    ['::7f00:1', '::7f00:1', 'ipv4Compatible'],
    ['::a00:1', '::a00:1', 'ipv4Compatible'],
    ['::ffff:0:7f00:1', '::ffff:0:7f00:1', 'rfc6145'],
    ['64:ff9b::127.0.0.1', '64:ff9b::7f00:1', 'rfc6052'],
    ['64:ff9b::a9fe:a9fe', '64:ff9b::a9fe:a9fe', 'rfc6052'],
    ['2002:7f00:1::1', '2002:7f00:1::1', '6to4'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
    ['0.0.0.0', '0.0.0.0', 'unspecified'],
    ['0', '0.0.0.0', 'unspecified'],
    ['0.1.2.3', '0.1.2.3', 'unspecified'],
    ['::', '::', 'unspecified'],
    ['10.0.0.1', '10.0.0.1', 'private'],
    ['172.16.5.4', '172.16.5.4', 'private'],
    ['172.31.255.255', '172.31.255.255', 'private'],
    ['192.168.1.1', '192.168.1.1', 'private'],
    ['0xc0a80101', '192.168.1.1', 'private'],
    ['3232235777', '192.168.1.1', 'private'],
    ['fc00::1', 'fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'fd12:3456::1', 'uniqueLocal'],
    ['169.254.169.254', '169.254.169.254', 'linkLocal'],
    ['0xa9fea9fe', '169.254.169.254', 'linkLocal'],
    ['fe80::1', 'fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'fe80::1%eth0', 'linkLocal'],
    ['100.64.0.1', '100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.254', '100.127.255.254', 'carrierGradeNat'],
    ['224.0.0.1', '224.0.0.1', 'multicast'],
    ['239.255.255.250', '239.255.255.250', 'multicast'],
    ['ff02::1', 'ff02::1', 'multicast'],
    ['255.255.255.255', '255.255.255.255', 'broadcast'],
    ['240.0.0.1', '240.0.0.1', 'reserved'],
    ['192.0.2.1', '192.0.2.1', 'reserved'],
    ['2001:db8::1', '2001:db8::1', 'reserved'],
    ['4000::1', '4000::1', 'reserved'],
    ['fec0::1', 'fec0::1', 'deprecatedSiteLocal'],
    // Public: the only range let through without PARTNER_ALLOWED_NETWORKS.
    ['93.184.216.34', '93.184.216.34', 'unicast'],
    ['100.63.255.255', '100.63.255.255', 'unicast'],
    ['100.128.0.0', '100.128.0.0', 'unicast'],
    ['172.32.0.1', '172.32.0.1', 'unicast'],
    ['::ffff:93.184.216.34', '93.184.216.34', 'unicast'],
    ['2606:2800:220:1::1', '2606:2800:220:1::1', 'unicast'],
  ];
  for (const [spelling, address, range] of table)
    assert.deepEqual(classifyAddress(spelling), { address, range }, spelling);
  for (const notIp of ['localhost', 'example.com', '256.0.0.1', '1.2.3.4.5', '', '::g', 'http://127.0.0.1/'])
    assert.equal(classifyAddress(notIp), null, notIp);
});

test('checkAddress: only public unicast passes, unless inside PARTNER_ALLOWED_NETWORKS', () => {
  assert.deepEqual(checkAddress('2130706433', []), {
    address: '127.0.0.1',
    range: 'loopback',
    message: 'destination 127.0.0.1 is loopback: not allowed',
  });
  assert.equal(checkAddress('169.254.169.254', [])?.message, 'destination 169.254.169.254 is link-local: not allowed');
  assert.equal(checkAddress('10.1.2.3', [])?.message, 'destination 10.1.2.3 is private: not allowed');
  assert.equal(
    checkAddress('100.64.0.1', [])?.message,
    'destination 100.64.0.1 is carrier-grade NAT (shared): not allowed',
  );
  assert.equal(checkAddress('::', [])?.message, 'destination :: is unspecified: not allowed');
  assert.equal(
    checkAddress('64:ff9b::7f00:1', [])?.message,
    'destination 64:ff9b::7f00:1 is NAT64 (embeds an IPv4 address): not allowed',
  );
  assert.equal(checkAddress('not-an-ip', [])?.range, 'invalid');
  assert.equal(checkAddress('93.184.216.34', []), null);

  const table: [string, string[], boolean][] = [
    // address, allowed networks (normalised as config.ts stores them), allowed?
    ['127.0.0.1', ['127.0.0.0/8'], true],
    ['127.0.0.1', ['127.0.0.1/32'], true],
    ['127.0.0.2', ['127.0.0.1/32'], false],
    ['::ffff:127.0.0.1', ['127.0.0.0/8'], true], // the mapped form is the IPv4 address
    ['::1', ['127.0.0.0/8'], false], // IPv6 loopback is not in an IPv4 network
    ['::1', ['::1/128'], true],
    ['10.20.30.40', ['10.20.0.0/16'], true],
    ['10.21.0.1', ['10.20.0.0/16'], false],
    ['169.254.169.254', ['10.0.0.0/8', '192.168.0.0/16'], false],
    ['fd00::5', ['fd00::/8'], true],
    ['fe80::1', ['fd00::/8'], false],
    ['::ffff:10.0.0.1', ['::ffff:0:0/96'], true], // an IPv6 network written as such matches the mapped form as written
    ['0.0.0.0', ['0.0.0.0/32'], true],
    ['93.184.216.34', ['10.0.0.0/8'], true], // public stays allowed whatever the list says
  ];
  for (const [ip, allowed, ok] of table)
    assert.equal(checkAddress(ip, allowed) === null, ok, `${ip} with ${allowed.join(',')}`);
});

test('checkDestinationUrl: refused literal hosts (every spelling) and localhost at save time; names are not resolved', () => {
  const refused: [string, string][] = [
    ['http://127.0.0.1/leads', '127.0.0.1'],
    ['http://2130706433:8080/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://0.0.0.0:3000/', '0.0.0.0'],
    ['http://0/', '0.0.0.0'],
    ['http://[::1]:3000/', '::1'],
    ['http://[::]/', '::'],
    ['http://[::ffff:127.0.0.1]/', '127.0.0.1'],
    ['http://[::ffff:a9fe:a9fe]/', '169.254.169.254'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['https://10.0.0.8/', '10.0.0.8'],
    ['https://192.168.0.1./', '192.168.0.1'],
    ['http://100.64.1.1/', '100.64.1.1'],
    ['http://[fe80::1]/', 'fe80::1'],
    ['http://[fd00::1]/', 'fd00::1'],
    ['http://224.0.0.1/', '224.0.0.1'],
    ['http://localhost:3000/', '127.0.0.1'],
    ['http://LOCALHOST./', '127.0.0.1'],
    ['http://api.localhost/', '127.0.0.1'],
  ];
  for (const [url, address] of refused) assert.equal(checkDestinationUrl(url, [])?.address, address, url);
  assert.equal(
    checkDestinationUrl('http://127.1/', [])?.message,
    'points to 127.0.0.1, a loopback address: Leadgate does not call loopback, private, link-local or other non-public addresses unless PARTNER_ALLOWED_NETWORKS includes them',
  );
  assert.match(checkDestinationUrl('http://localhost/', [])!.message, /^points to localhost, a loopback address: /);
  // Host names are left to the connect-time check; public addresses and allowed networks pass.
  for (const url of [
    'https://broker.example/api',
    'https://127.0.0.1.nip.io/',
    'http://93.184.216.34/',
    'https://[2606:2800:220:1::1]/',
    'not a url',
  ]) {
    assert.equal(checkDestinationUrl(url, []), null, url);
  }
  assert.equal(checkDestinationUrl('http://127.0.0.1:3000/', ['127.0.0.0/8']), null);
  assert.equal(checkDestinationUrl('http://localhost:3000/', ['127.0.0.1/32']), null);
  assert.equal(checkDestinationUrl('http://localhost:3000/', ['::1/128']), null);
  assert.equal(checkDestinationUrl('http://[::1]:3000/', ['127.0.0.0/8'])?.address, '::1');
});

const SPELLINGS = ['localhost', '[::1]', '2130706433', '0x7f000001', '127.1', '0.0.0.0', '[::ffff:127.0.0.1]'];

test('every loopback spelling reaches a loopback server when allowed, and none does when not: the partner is never called', async (t) => {
  const trap = await startTrap(t);
  // Control: with these networks allowed each spelling does reach the server, so the refusals below are the guard's doing.
  const open = client(t, ['127.0.0.0/8', '::1/128', '0.0.0.0/32']);
  for (const host of SPELLINGS) {
    const call = await open.call(integration(trap.url(host)), LEAD);
    assert.equal(call.outcome, 'accepted', `${host}: ${call.reason}`);
  }
  assert.equal(trap.received.length, SPELLINGS.length);

  const guarded = client(t, []);
  const reasons: Record<string, string | null> = {};
  for (const host of SPELLINGS) {
    const call = await guarded.call(integration(trap.url(host)), LEAD);
    assert.equal(call.outcome, 'error', host);
    assert.equal(call.response, null, host);
    reasons[host] = call.reason;
  }
  // Where localhost resolves to ::1 as well, the first refused address is named.
  assert.match(
    reasons.localhost!,
    /^destination localhost resolves to (127\.0\.0\.1|::1), which is loopback: not allowed$/,
  );
  assert.deepEqual(
    { ...reasons, localhost: undefined },
    {
      localhost: undefined,
      '[::1]': 'destination ::1 is loopback: not allowed',
      '2130706433': 'destination 127.0.0.1 is loopback: not allowed',
      '0x7f000001': 'destination 127.0.0.1 is loopback: not allowed',
      '127.1': 'destination 127.0.0.1 is loopback: not allowed',
      '0.0.0.0': 'destination 0.0.0.0 is unspecified: not allowed',
      '[::ffff:127.0.0.1]': 'destination 127.0.0.1 is loopback: not allowed',
    },
  );
  assert.equal(trap.received.length, SPELLINGS.length, 'no request got through the guard');
});

test('a host name is checked after resolution, on every address, at every new connection (DNS rebinding)', async (t) => {
  const trap = await startTrap(t);
  // A resolver as data: what "partner.test" resolves to changes between connections, like a rebinding DNS answer.
  const answers: string[][] = [['127.0.0.1'], ['::1'], ['127.0.0.1', '10.9.8.7'], ['127.0.0.1']];
  const asked: string[] = [];
  const lookup: Lookup = async (hostname) => {
    asked.push(hostname);
    return answers.shift()!;
  };
  const allowed = ['127.0.0.1/32'];
  // Only the resolver decides: the name itself means nothing to the guard.
  await assert.rejects(
    resolveDestination('partner.test', [], async () => ['127.0.0.1']),
    /destination partner\.test resolves to 127\.0\.0\.1, which is loopback: not allowed/,
  );
  assert.deepEqual(await resolveDestination('partner.test', [], async () => ['93.184.216.34']), ['93.184.216.34']);

  const agent = createOutboundAgent({ allowedNetworks: allowed, lookup });
  t.after(() => agent.close());
  const send = () =>
    request(trap.url('partner.test'), { dispatcher: agent, method: 'POST', body: '{}' }).then(
      async (r) => (await r.body.text(), r.statusCode),
    );

  assert.equal(await send(), 200); // 127.0.0.1: allowed, and the socket went to the checked address
  await assert.rejects(send(), {
    code: 'LEADGATE_DESTINATION_REFUSED',
    message: 'destination partner.test resolves to ::1, which is loopback: not allowed',
  });
  // One refused address among allowed ones refuses the lot: a fallback must be as safe as the first.
  await assert.rejects(send(), {
    message: 'destination partner.test resolves to 10.9.8.7, which is private: not allowed',
  });
  assert.equal(await send(), 200);
  assert.deepEqual(
    asked,
    ['partner.test', 'partner.test', 'partner.test', 'partner.test'],
    'resolved once per connection, by the guard',
  );
  assert.equal(trap.received.length, 2);
});

test('redirects are not followed: a 3xx towards a refused address is the answer, nothing is sent there', async (t) => {
  const trap = await startTrap(t);
  const target = trap.url('[::1]');
  const redirector = createServer((_req, res) => {
    res.writeHead(307, { location: target, connection: 'close' });
    res.end();
  });
  await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => redirector.close(r)));
  const url = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/leads`;
  // 127.0.0.1 is allowed (the redirector listens there); ::1, where it points, is not.
  const call = await client(t, ['127.0.0.1/32']).call(integration(url), LEAD);
  assert.equal(call.outcome, 'rejected');
  assert.equal(call.reason, `HTTP 307 (redirects to ${target}): (empty answer)`);
  assert.equal(trap.received.length, 0);
});
