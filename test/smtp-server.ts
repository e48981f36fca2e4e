// A tiny SMTP server on loopback for tests: enough of RFC 5321 to take a message (EHLO, STARTTLS,
// AUTH PLAIN/LOGIN, MAIL, RCPT, DATA, QUIT), recording what it was told. And a self-signed
// certificate for localhost/127.0.0.1 made with the openssl command at test time.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import type { TestContext } from 'node:test';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The message after un-dot-stuffing, CRLF line ends. */
  data: string;
  /** Whether it came over TLS. */
  secure: boolean;
}

export interface SmtpServerOptions {
  /** Offer STARTTLS with this certificate. */
  starttls?: { key: string; cert: string };
  /** TLS from the first byte (smtps). */
  implicitTls?: { key: string; cert: string };
  /** Offer AUTH PLAIN LOGIN (only these mechanisms: `mechanisms`). */
  auth?: { mechanisms: string[] };
  /** What RCPT TO answers (default 250). */
  rcptReply?: string;
}

export interface TestSmtpServer {
  port: number;
  /** Every command line received, in order (AUTH's payloads decoded). */
  commands: string[];
  messages: ReceivedMail[];
  /** Credentials received (user, password). */
  logins: { mechanism: string; user: string; password: string }[];
}

const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');

export async function startSmtpServer(t: TestContext, o: SmtpServerOptions = {}): Promise<TestSmtpServer> {
  const state: TestSmtpServer = { port: 0, commands: [], messages: [], logins: [] };
  const handle = (raw: net.Socket) => {
    let socket: net.Socket = raw;
    let buffer = '';
    let mail: ReceivedMail | null = null;
    let inData = false;
    let pending: ((line: string) => void) | null = null;
    const say = (line: string) => socket.write(`${line}\r\n`);
    const ehlo = () => {
      const words = ['250-test.smtp.local'];
      if (o.starttls && !(socket instanceof tls.TLSSocket)) words.push('250-STARTTLS');
      if (o.auth) words.push(`250-AUTH ${o.auth.mechanisms.join(' ')}`);
      words.push('250 8BITMIME');
      say(words.join('\r\n'));
    };
    const onLine = (line: string) => {
      if (pending) return pending(line);
      if (inData) {
        if (line === '.') {
          inData = false;
          state.messages.push(mail!);
          mail = null;
          return say('250 2.0.0 queued');
        }
        mail!.data += `${line.startsWith('.') ? line.slice(1) : line}\r\n`;
        return;
      }
      const [verb, ...rest] = line.split(' ');
      const upper = verb.toUpperCase();
      if (upper === 'AUTH') {
        const mech = rest[0]?.toUpperCase();
        if (mech === 'PLAIN') {
          const [, user, password] = decode(rest[1] ?? '').split('\0');
          state.commands.push(`AUTH PLAIN ${user}`);
          state.logins.push({ mechanism: 'PLAIN', user, password });
          return say('235 2.7.0 ok');
        }
        state.commands.push('AUTH LOGIN');
        say('334 VXNlcm5hbWU6');
        pending = (u) => {
          say('334 UGFzc3dvcmQ6');
          pending = (p) => {
            pending = null;
            state.logins.push({ mechanism: 'LOGIN', user: decode(u), password: decode(p) });
            say('235 2.7.0 ok');
          };
        };
        return;
      }
      state.commands.push(line);
      if (upper === 'EHLO') return ehlo();
      if (upper === 'STARTTLS' && o.starttls) {
        say('220 2.0.0 go ahead');
        raw.removeAllListeners('data');
        socket = new tls.TLSSocket(raw, { isServer: true, ...o.starttls });
        socket.on('data', onData).on('error', () => {});
        return;
      }
      if (upper === 'MAIL') {
        mail = { from: /<(.*)>/.exec(line)?.[1] ?? '', to: [], data: '', secure: socket instanceof tls.TLSSocket };
        return say('250 2.1.0 ok');
      }
      if (upper === 'RCPT') {
        const reply = o.rcptReply ?? '250 2.1.5 ok';
        if (reply.startsWith('2')) mail?.to.push(/<(.*)>/.exec(line)?.[1] ?? '');
        return say(reply);
      }
      if (upper === 'DATA') {
        if (!mail?.to.length) return say('554 5.5.1 no valid recipients');
        inData = true;
        return say('354 end with <CRLF>.<CRLF>');
      }
      if (upper === 'QUIT') {
        say('221 2.0.0 bye');
        return socket.end();
      }
      say('502 5.5.2 not implemented');
    };
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const lines = buffer.split('\r\n');
      buffer = lines.pop()!;
      for (const line of lines) onLine(line);
    };
    socket.on('data', onData).on('error', () => {});
    say('220 test.smtp.local ESMTP ready');
  };
  const server = o.implicitTls ? tls.createServer(o.implicitTls, handle) : net.createServer(handle);
  const sockets = new Set<net.Socket>();
  server.on(o.implicitTls ? 'secureConnection' : 'connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as net.AddressInfo).port;
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return state;
}

/**
 * A self-signed certificate for localhost and 127.0.0.1 (openssl). Without the command: null, so a
 * test can skip, except under CI=true, where it throws (CI must run the TLS tests).
 */
export function selfSignedCert(): { key: string; cert: string } | null {
  const dir = mkdtempSync(join(tmpdir(), 'leadgate-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } catch (err) {
    if (process.env.CI === 'true')
      throw new Error(`openssl could not make a test certificate: ${(err as Error).message}`);
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
