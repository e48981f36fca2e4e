// Invitations mailed when SMTP_URL is set (issue 27): through a real SMTP server on loopback, after
// the invitation is committed; the answer's `mail` says what happened, the audit log records it
// (never the link), and a mail that fails (refused by the outbound guard, 5xx to RCPT) loses no
// invitation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { insertTrafficProvider } from '../../../../test/fixtures.js';
import { buildTestApp, call, forEachDatabase, type TestApp } from '../../../../test/helpers.js';
import { startSmtpServer } from '../../../../test/smtp-server.js';

const PUBLIC = 'https://leads.example.test';
const FROM = 'Leadgate <noreply@leadgate.test>';

async function setPublicUrl(ta: TestApp) {
  const res = await call(ta.app, ta.ownerToken, {
    method: 'PUT',
    url: '/api/hosting/public-url',
    payload: { public_base_url: PUBLIC },
  });
  assert.equal(res.statusCode, 200, res.body);
}

const invite = (ta: TestApp, provider: string, payload: object) =>
  call(ta.app, ta.ownerToken, { method: 'POST', url: `/api/traffic-providers/${provider}/users`, payload });

const accept = (ta: TestApp, token: string) =>
  ta.app.inject({
    method: 'POST',
    url: '/api/portal/invitations/accept',
    payload: { token, password: 'a-good-password-1' },
  });

async function mailAudit(ta: TestApp) {
  const rows = await ta.db
    .selectFrom('audit_log')
    .select(['details'])
    .where('action', '=', 'provider_user.invitation_mail')
    .orderBy('at')
    .execute();
  return rows.map((r) => JSON.parse(r.details as string));
}

/** The message's headers, unfolded, by lower-case name. */
function headers(data: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const line of data
    .split('\r\n\r\n')[0]
    .replace(/\r\n[ \t]/g, ' ')
    .split('\r\n')) {
    const [name, ...rest] = line.split(':');
    map.set(name.toLowerCase(), [...(map.get(name.toLowerCase()) ?? []), rest.join(':').trim()]);
  }
  return map;
}

forEachDatabase('invitation mail', (engine) => {
  test('SMTP_URL set: the link is mailed to the invited address, and its token accepts the invitation', async (t) => {
    const smtp = await startSmtpServer(t);
    const ta = await buildTestApp(t, engine, {
      env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}?starttls=off`, MAIL_FROM: FROM },
    });
    await setPublicUrl(ta);
    const provider = await insertTrafficProvider(ta.db, { name: 'Acme Media' });
    // A CR/LF in the name adds no header.
    const res = await invite(ta, provider, { email: 'Ann@Example.test', name: 'Ann\r\nBcc: victim@evil.test' });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual(body.mail, { status: 'sent', to: 'ann@example.test', error: null });

    assert.equal(smtp.messages.length, 1);
    const [m] = smtp.messages;
    assert.equal(m.from, 'noreply@leadgate.test');
    assert.deepEqual(m.to, ['ann@example.test']);
    const h = headers(m.data);
    assert.deepEqual(h.get('from'), ['"Leadgate" <noreply@leadgate.test>']);
    assert.deepEqual(h.get('to'), ['"Ann Bcc: victim@evil.test" <ann@example.test>']);
    assert.deepEqual(h.get('subject'), ['Your invitation to the Acme Media portal']);
    assert.equal(h.get('bcc'), undefined);
    const text = m.data.split('\r\n\r\n').slice(1).join('\r\n\r\n');
    assert.match(text, /portal of Acme Media/);
    assert.match(text, /works once only, until \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
    assert.ok(text.includes(body.invitation_expires_at.slice(0, 16).replace('T', ' ')));
    const link = /https:\/\/\S+/.exec(text)![0];
    assert.equal(link, body.invitation_url);
    assert.ok(link.startsWith(`${PUBLIC}/portal/invitation#token=`));
    const token = link.split('#token=')[1];
    assert.equal((await accept(ta, token)).statusCode, 201);

    const [audit] = await mailAudit(ta);
    assert.deepEqual(audit, { provider_user_id: body.id, email: 'ann@example.test', status: 'sent', error: null });
    // The token and the link stay out of the audit log and the server's log.
    const all = await ta.db.selectFrom('audit_log').select('details').execute();
    assert.ok(!JSON.stringify(all).includes(token));
    assert.ok(!ta.logs.join('').includes(token));

    // A renewed invitation is mailed too, with a new link.
    const other = await invite(ta, provider, { email: 'bob@example.test' });
    const renewed = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: `/api/traffic-providers/${provider}/users/${other.json().id}/invitation`,
    });
    assert.equal(renewed.statusCode, 201, renewed.body);
    assert.equal(renewed.json().mail.status, 'sent');
    assert.equal(smtp.messages.length, 3);
    assert.ok(smtp.messages[2].data.includes(renewed.json().invitation_url));
    assert.ok(!smtp.messages[2].data.includes(other.json().invitation_url));
  });

  test('no SMTP_URL: not_configured (the link only in the answer), recorded in the audit log', async (t) => {
    const ta = await buildTestApp(t, engine);
    const provider = await insertTrafficProvider(ta.db, { name: 'Acme Media' });
    const res = await invite(ta, provider, { email: 'ann@example.test' });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json().mail, { status: 'not_configured', to: 'ann@example.test', error: null });
    assert.deepEqual(
      (await mailAudit(ta)).map((d) => d.status),
      ['not_configured'],
    );
  });

  test('a relay the outbound guard refuses: failed, nothing sent, the invitation still usable', async (t) => {
    const smtp = await startSmtpServer(t);
    // Loopback is not allowed here: the guard refuses 127.0.0.1 before connecting.
    const ta = await buildTestApp(t, engine, {
      env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}?starttls=off`, MAIL_FROM: FROM, PARTNER_ALLOWED_NETWORKS: '' },
    });
    await setPublicUrl(ta);
    const provider = await insertTrafficProvider(ta.db, { name: 'Acme Media' });
    const res = await invite(ta, provider, { email: 'ann@example.test' });
    assert.equal(res.statusCode, 201, res.body);
    const { mail, invitation_token } = res.json();
    assert.equal(mail.status, 'failed');
    assert.match(mail.error, /refused by the outbound guard: destination 127\.0\.0\.1 is loopback/);
    assert.deepEqual(smtp.commands, []);
    assert.equal((await accept(ta, invitation_token)).statusCode, 201);
    assert.deepEqual(
      (await mailAudit(ta)).map((d) => [d.status, /outbound guard/.test(d.error)]),
      [['failed', true]],
    );
  });

  test('a private relay address (as data, never connected to): failed; no public URL: failed, saying so', async (t) => {
    const ta = await buildTestApp(t, engine, {
      env: { SMTP_URL: 'smtp://10.255.0.1:25?starttls=off', MAIL_FROM: FROM },
    });
    const provider = await insertTrafficProvider(ta.db, { name: 'Acme Media' });
    const before = await invite(ta, provider, { email: 'ann@example.test' });
    assert.equal(before.json().mail.status, 'failed');
    assert.match(before.json().mail.error, /No public URL is set/);
    await setPublicUrl(ta);
    const res = await invite(ta, provider, { email: 'bob@example.test' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().mail.status, 'failed');
    assert.match(res.json().mail.error, /destination 10\.255\.0\.1 is private: not allowed/);
    assert.equal((await accept(ta, res.json().invitation_token)).statusCode, 201);
  });

  test('a server answering 5xx to RCPT: failed with its answer, the invitation still usable', async (t) => {
    const smtp = await startSmtpServer(t, { rcptReply: '550 5.1.1 mailbox unavailable' });
    const ta = await buildTestApp(t, engine, {
      env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}?starttls=off`, MAIL_FROM: FROM },
    });
    await setPublicUrl(ta);
    const provider = await insertTrafficProvider(ta.db, { name: 'Acme Media' });
    const res = await invite(ta, provider, { email: 'ann@example.test' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().mail.status, 'failed');
    assert.match(res.json().mail.error, /refused RCPT TO: 550 5\.1\.1 mailbox unavailable/);
    assert.equal(smtp.messages.length, 0);
    assert.equal((await accept(ta, res.json().invitation_token)).statusCode, 201);
  });
});
