// The SMTP client against a real SMTP server on loopback (test/smtp-server.ts): plain, STARTTLS
// and implicit TLS with a certificate made by openssl at test time, AUTH PLAIN and LOGIN, the
// message's headers and body, dot-stuffing, and every failure a MailError (never a crash).
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
import { loadConfig, type MailSettings } from '../config.js';
import { selfSignedCert, startSmtpServer } from '../../../test/smtp-server.js';
import { MailError, sendMail, type SmtpOptions } from './smtp.js';

const LOOPBACK = ['127.0.0.0/8', '::1/128'];
const FROM = 'Leadgate <noreply@leadgate.test>';
const cert = selfSignedCert();
const noTls = cert ? false : 'the openssl command is missing (under CI=true this fails instead)';

const settings = (url: string): MailSettings => loadConfig({ SMTP_URL: url, MAIL_FROM: FROM }).mail!;
const message = (over: Partial<Parameters<typeof sendMail>[1]> = {}) => ({
  from: settings('smtp://x.test').from,
  to: { name: 'Ann Example', address: 'ann@example.test' },
  subject: 'Your invitation',
  text: 'Hello Ann,\n\nOpen https://leads.example.test/portal/invitation#token=lgi_abc\n',
  ...over,
});
const opts = (url: string, over: Partial<SmtpOptions> = {}): SmtpOptions => ({
  settings: settings(url),
  allowedNetworks: LOOPBACK,
  timeoutMs: 2_000,
  lookup: async () => ['127.0.0.1'],
  ca: cert?.cert,
  ...over,
});

/** The headers of a received message, unfolded, by lower-case name (every occurrence). */
function headers(data: string): Map<string, string[]> {
  const head = data.split('\r\n\r\n')[0].replace(/\r\n[ \t]/g, ' ');
  const map = new Map<string, string[]>();
  for (const line of head.split('\r\n')) {
    const [name, ...rest] = line.split(':');
    map.set(name.toLowerCase(), [...(map.get(name.toLowerCase()) ?? []), rest.join(':').trim()]);
  }
  return map;
}

const rejects = (p: Promise<unknown>, re: RegExp) =>
  assert.rejects(p, (err: Error) => {
    assert.ok(err instanceof MailError, `a MailError, not ${err}`);
    assert.match(err.message, re);
    return true;
  });

describe('SMTP client', () => {
  test('plain relay (?starttls=off): a proper RFC 5322 message, dot-stuffed, with QUIT', async (t) => {
    const server = await startSmtpServer(t);
    const text = 'Line one\n.starts with a dot\n.\nlast';
    await sendMail(opts(`smtp://127.0.0.1:${server.port}?starttls=off`), message({ text }));
    assert.equal(server.messages.length, 1);
    const [m] = server.messages;
    assert.equal(m.from, 'noreply@leadgate.test');
    assert.deepEqual(m.to, ['ann@example.test']);
    const h = headers(m.data);
    assert.deepEqual(h.get('from'), ['"Leadgate" <noreply@leadgate.test>']);
    assert.deepEqual(h.get('to'), ['"Ann Example" <ann@example.test>']);
    assert.deepEqual(h.get('subject'), ['Your invitation']);
    assert.deepEqual(h.get('mime-version'), ['1.0']);
    assert.deepEqual(h.get('content-type'), ['text/plain; charset=utf-8']);
    assert.deepEqual(h.get('content-transfer-encoding'), ['7bit']);
    assert.match(h.get('message-id')![0], /^<[0-9a-f]{32}@leadgate\.test>$/);
    const date = h.get('date')![0];
    assert.match(date, /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
    assert.ok(Math.abs(Date.parse(date) - Date.now()) < 60_000);
    // The lines starting with a dot arrive whole: stuffed on the way, unstuffed by the server.
    assert.equal(m.data.split('\r\n\r\n').slice(1).join('\r\n\r\n'), 'Line one\r\n.starts with a dot\r\n.\r\nlast\r\n');
    assert.equal(server.commands.at(-1), 'QUIT');
    assert.ok(!server.commands.some((c) => c.startsWith('AUTH')));
  });

  test('a CR/LF in a name or the subject adds no header; non-ASCII is encoded (RFC 2047, base64 body)', async (t) => {
    const server = await startSmtpServer(t);
    await sendMail(
      opts(`smtp://127.0.0.1:${server.port}?starttls=off`),
      message({
        to: { name: 'Eve\r\nBcc: victim@evil.test\r\n', address: 'eve@example.test' },
        subject: 'Hi\nX-Injected: yes',
        text: 'Grüße, Zoë — 你好\n',
      }),
    );
    const [m] = server.messages;
    const h = headers(m.data);
    assert.equal(h.get('bcc'), undefined);
    assert.equal(h.get('x-injected'), undefined);
    assert.deepEqual(h.get('to'), ['"Eve Bcc: victim@evil.test" <eve@example.test>']);
    assert.deepEqual(h.get('subject'), ['Hi X-Injected: yes']);
    assert.deepEqual(m.to, ['eve@example.test']);
    assert.deepEqual(h.get('content-transfer-encoding'), ['base64']);
    assert.equal(Buffer.from(m.data.split('\r\n\r\n')[1], 'base64').toString('utf8'), 'Grüße, Zoë — 你好\r\n');

    await sendMail(
      opts(`smtp://127.0.0.1:${server.port}?starttls=off`),
      message({ to: { name: 'Zoë Ünïcode', address: 'z@example.test' }, subject: 'Einladung für Zoë' }),
    );
    const h2 = headers(server.messages[1].data);
    const word = (s: string) =>
      s.replace(/=\?UTF-8\?B\?([^?]*)\?=\s*/g, (_, b) => Buffer.from(b, 'base64').toString('utf8'));
    assert.match(h2.get('subject')![0], /^=\?UTF-8\?B\?/);
    assert.equal(word(h2.get('subject')![0]), 'Einladung für Zoë');
    assert.equal(word(h2.get('to')![0]), 'Zoë Ünïcode<z@example.test>');
  });

  test(
    'STARTTLS, then AUTH PLAIN with the credentials SMTP_URL configures; the certificate is checked',
    { skip: noTls },
    async (t) => {
      const server = await startSmtpServer(t, { starttls: cert!, auth: { mechanisms: ['PLAIN', 'LOGIN'] } });
      await sendMail(opts(`smtp://mailer%40leadgate.test:s3cret%3Apw@localhost:${server.port}`), message());
      assert.deepEqual(server.logins, [{ mechanism: 'PLAIN', user: 'mailer@leadgate.test', password: 's3cret:pw' }]);
      assert.equal(server.messages.length, 1);
      assert.equal(server.messages[0].secure, true);
      // Nothing but EHLO and STARTTLS before TLS.
      assert.deepEqual(
        server.commands.slice(0, 3).map((c) => c.split(' ')[0]),
        ['EHLO', 'STARTTLS', 'EHLO'],
      );

      // A certificate not made out to the name asked for: refused before AUTH.
      const other = await startSmtpServer(t, { starttls: cert!, auth: { mechanisms: ['PLAIN'] } });
      await rejects(
        sendMail(opts(`smtp://u:pw@mail.example.test:${other.port}`), message()),
        /TLS with the mail server failed:.*mail\.example\.test/,
      );
      // A certificate from no trusted authority: refused too.
      await rejects(sendMail(opts(`smtp://u:pw@localhost:${other.port}`, { ca: undefined }), message()), /TLS/);
      assert.deepEqual(other.logins, []);
      assert.equal(other.messages.length, 0);
    },
  );

  test('STARTTLS is required unless ?starttls=off: a server not offering it gets no credentials', async (t) => {
    const server = await startSmtpServer(t, { auth: { mechanisms: ['PLAIN'] } });
    await rejects(sendMail(opts(`smtp://u:pw@localhost:${server.port}`), message()), /does not offer STARTTLS/);
    assert.deepEqual(server.logins, []);
    assert.ok(!server.commands.some((c) => /^(AUTH|MAIL)/.test(c)));
  });

  test('smtps:// (implicit TLS) with AUTH LOGIN when the server offers only LOGIN', { skip: noTls }, async (t) => {
    const server = await startSmtpServer(t, { implicitTls: cert!, auth: { mechanisms: ['LOGIN'] } });
    await sendMail(opts(`smtps://mailer:pw-2@localhost:${server.port}`), message());
    assert.deepEqual(server.logins, [{ mechanism: 'LOGIN', user: 'mailer', password: 'pw-2' }]);
    assert.equal(server.messages[0].secure, true);
  });

  test('a recipient refused (5xx to RCPT) is a MailError naming the step and the answer', async (t) => {
    const server = await startSmtpServer(t, { rcptReply: '550 5.1.1 No such user here' });
    await rejects(
      sendMail(opts(`smtp://127.0.0.1:${server.port}?starttls=off`), message()),
      /refused RCPT TO: 550 5\.1\.1 No such user here/,
    );
    assert.equal(server.messages.length, 0);
  });

  test('the outbound guard refuses the relay before any traffic: loopback not allowed, a name resolving to a private address', async (t) => {
    const server = await startSmtpServer(t);
    await rejects(
      sendMail(opts(`smtp://127.0.0.1:${server.port}?starttls=off`, { allowedNetworks: [] }), message()),
      /refused by the outbound guard: destination 127\.0\.0\.1 is loopback/,
    );
    assert.deepEqual(server.commands, []);
    // Addresses as data: the name "resolves" to 10.1.2.3 and 127.0.0.1; nothing is connected to.
    await rejects(
      sendMail(
        opts('smtp://relay.example.test:25?starttls=off', { lookup: async () => ['127.0.0.1', '10.1.2.3'] }),
        message(),
      ),
      /relay\.example\.test resolves to 10\.1\.2\.3, which is private/,
    );
  });

  test('a server answering every step slowly is cut off when the time for the whole mail is up', async (t) => {
    // Each reply takes 150 ms: within the step's 1 s, but the whole mail may take 400 ms only.
    const slow = net.createServer((socket) => {
      const say = (line: string) => setTimeout(() => socket.write(`${line}\r\n`), 150);
      say('220 slow ESMTP');
      socket.on('data', () => say('250 ok'));
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const sockets = new Set<net.Socket>();
    slow.on('connection', (s) => sockets.add(s));
    t.after(() => (sockets.forEach((s) => s.destroy()), new Promise((r) => slow.close(r))));
    const port = (slow.address() as net.AddressInfo).port;
    const started = Date.now();
    await rejects(
      sendMail(opts(`smtp://127.0.0.1:${port}?starttls=off`, { timeoutMs: 1_000, totalMs: 400 }), message()),
      /took too long: it had not answered .* when the time for the whole mail was up/,
    );
    assert.ok(Date.now() - started < 900, `${Date.now() - started} ms`);
  });

  test('an address that refuses the connection is skipped for the next checked one', async (t) => {
    const server = await startSmtpServer(t);
    // 127.0.0.2 is loopback too, but nothing listens there: refused, then 127.0.0.1 takes the mail.
    await sendMail(
      opts(`smtp://relay.test:${server.port}?starttls=off`, { lookup: async () => ['127.0.0.2', '127.0.0.1'] }),
      message(),
    );
    assert.equal(server.messages.length, 1);
  });

  test('a server that never answers: the step times out as a MailError; an address with CR/LF is refused', async (t) => {
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const sockets: net.Socket[] = [];
    silent.on('connection', (s) => sockets.push(s));
    t.after(() => (sockets.forEach((s) => s.destroy()), new Promise((r) => silent.close(r))));
    const port = (silent.address() as net.AddressInfo).port;
    await rejects(
      sendMail(opts(`smtp://127.0.0.1:${port}?starttls=off`, { timeoutMs: 200 }), message()),
      /did not answer the greeting in time/,
    );
    await rejects(
      sendMail(
        opts(`smtp://127.0.0.1:${port}?starttls=off`),
        message({ to: { name: null, address: 'a@b.test>\r\nRCPT TO:<c@d.test' } }),
      ),
      /is not an address this server can mail/,
    );
  });
});
