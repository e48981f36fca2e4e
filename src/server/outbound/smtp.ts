// A small SMTP client (RFC 5321) for the mail Leadgate sends (invitations): EHLO, STARTTLS,
// AUTH PLAIN or LOGIN, MAIL FROM, RCPT TO, DATA (dot-stuffed), QUIT. Its connection passes the
// outbound guard (guard.ts connectGuarded: the relay's every address checked against
// PARTNER_ALLOWED_NETWORKS, the socket opened to a checked one); TLS verifies the certificate
// against the relay's host name. Every step has a deadline. Whatever goes wrong is a MailError
// whose message an operator may read: it never holds the password.
import os from 'node:os';
import type net from 'node:net';
import tls from 'node:tls';
import type { MailSettings } from '../config.js';
import { connectGuarded, DestinationRefusedError, tlsFor, type Lookup } from './guard.js';
import { buildMessage, type MailMessage } from './mail-message.js';

export class MailError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MailError';
  }
}

export interface SmtpOptions {
  settings: MailSettings;
  /** PARTNER_ALLOWED_NETWORKS: the relay is checked like every other destination. */
  allowedNetworks: readonly string[];
  /** Deadline of each step (connecting, each reply). */
  timeoutMs?: number;
  /** Deadline of the whole conversation (a server answering slowly at every step is cut off too). */
  totalMs?: number;
  lookup?: Lookup;
  /** Trusted certificates instead of the system's (tests). */
  ca?: string;
}

interface Reply {
  code: number;
  lines: string[];
}

// An address that goes into MAIL FROM / RCPT TO as is: ASCII atext, one @, a dotted domain.
const ADDRESS_RE = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[a-zA-Z0-9-]+(\.[a-zA-Z0-9-]+)+$/;

/** What a server said, fit for an operator: printable, one line, short. */
const said = (r: Reply) => `${r.code} ${r.lines.join(' ')}`.replace(/[^\x20-\x7e]/g, '?').slice(0, 300);

const ignore = () => {};

/** One SMTP conversation: reads replies line by line, on the plain socket and then on TLS. */
class Conversation {
  private buffer = '';
  private lines: string[] = [];
  private wake: (() => void) | null = null;
  private failure: Error | null = null;
  private readonly onData = (chunk: Buffer) => this.take(chunk.toString('latin1'));
  private readonly onEnd = () => this.fail(new MailError('the mail server closed the connection'));
  private readonly onError = (err: Error) =>
    this.fail(new MailError(`connection to the mail server failed: ${err.message}`));

  constructor(
    public socket: net.Socket,
    private readonly host: string,
    private readonly timeoutMs: number,
    /** When the whole conversation must be over (Date.now() milliseconds). */
    private readonly until: number,
  ) {
    this.attach(socket);
  }

  private attach(socket: net.Socket) {
    this.socket = socket;
    socket.on('data', this.onData).on('end', this.onEnd).on('close', this.onEnd).on('error', this.onError);
  }

  private detach() {
    this.socket.off('data', this.onData).off('end', this.onEnd).off('close', this.onEnd).off('error', this.onError);
  }

  private take(text: string) {
    this.buffer += text;
    if (this.buffer.length > 64_000) return this.fail(new MailError('the mail server sent an overlong reply'));
    const parts = this.buffer.split('\r\n');
    this.buffer = parts.pop()!;
    this.lines.push(...parts);
    this.wake?.();
  }

  private fail(err: Error) {
    this.failure ??= err;
    this.wake?.();
  }

  private async line(step: string): Promise<string> {
    while (!this.lines.length) {
      if (this.failure) throw this.failure;
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        const left = this.until - Date.now();
        timer = setTimeout(
          () =>
            this.fail(
              new MailError(
                left < this.timeoutMs
                  ? `the mail server took too long: it had not answered ${step} when the time for the whole mail was up`
                  : `the mail server did not answer ${step} in time`,
              ),
            ),
          Math.max(0, Math.min(this.timeoutMs, left)),
        );
      });
      clearTimeout(timer);
      this.wake = null;
    }
    return this.lines.shift()!;
  }

  /** A whole reply: "250-…" lines up to the "250 …" one. */
  async reply(step: string): Promise<Reply> {
    const lines: string[] = [];
    for (;;) {
      const line = await this.line(step);
      const m = /^(\d{3})([ -])(.*)$/.exec(line);
      if (!m) throw new MailError(`the mail server answered ${step} with something that is not SMTP`);
      lines.push(m[3]);
      if (m[2] === ' ') return { code: Number(m[1]), lines };
    }
  }

  /** Sends one command and wants a reply of the given class (2: 2xx, 3: 3xx). `shown`: the command as an error may name it. */
  async command(text: string, want: 2 | 3, shown = text.split(' ')[0]): Promise<Reply> {
    this.socket.write(`${text}\r\n`);
    return this.expect(shown, want);
  }

  async expect(step: string, want: 2 | 3): Promise<Reply> {
    const r = await this.reply(step);
    if (Math.floor(r.code / 100) !== want) throw new MailError(`the mail server refused ${step}: ${said(r)}`);
    return r;
  }

  /** STARTTLS accepted: the rest goes over TLS, the certificate checked against the relay's name. */
  async upgrade(ca?: string) {
    if (this.buffer || this.lines.length) throw new MailError('the mail server sent data before TLS began');
    this.detach();
    const plain = this.socket;
    const secure = await new Promise<tls.TLSSocket>((resolve, reject) => {
      const s = tls.connect({ socket: plain, ...tlsFor(this.host, ca) });
      s.setTimeout(this.timeoutMs, () => (s.destroy(), reject(new Error('the TLS handshake timed out'))));
      plain.on('error', ignore);
      s.on('error', reject); // `on`: a second error must not go unheard
      s.once('secureConnect', () => (s.setTimeout(0), s.off('error', reject), resolve(s)));
    }).catch((err: Error) => {
      plain.destroy();
      throw new MailError(`TLS with the mail server failed: ${err.message}`);
    });
    this.attach(secure);
  }

  close() {
    this.detach();
    this.socket.on('error', ignore).destroy();
  }
}

/** EHLO's keywords, upper case: "STARTTLS", "AUTH PLAIN LOGIN"… */
const keywords = (r: Reply) => r.lines.slice(1).map((l) => l.toUpperCase());
const offers = (ehlo: Reply, word: string) => keywords(ehlo).some((k) => k === word || k.startsWith(`${word} `));
const authOffers = (ehlo: Reply, mech: string) =>
  keywords(ehlo).some((k) => /^AUTH[ =]/.test(k) && k.slice(5).split(/\s+/).includes(mech));

/** Dot-stuffing (RFC 5321 4.5.2) and the end-of-data line. */
export const dataBlock = (message: string) =>
  `${message.replace(/\r?\n/g, '\r\n').replace(/^\./gm, '..').replace(/\r\n$/, '')}\r\n.`;

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

async function authenticate(c: Conversation, ehlo: Reply, user: string, password: string) {
  if (authOffers(ehlo, 'PLAIN')) return c.command(`AUTH PLAIN ${b64(`\0${user}\0${password}`)}`, 2, 'AUTH PLAIN');
  if (authOffers(ehlo, 'LOGIN')) {
    await c.command('AUTH LOGIN', 3);
    await c.command(b64(user), 3, 'AUTH LOGIN (user name)');
    return c.command(b64(password), 2, 'AUTH LOGIN (password)');
  }
  throw new MailError('the mail server offers neither AUTH PLAIN nor AUTH LOGIN');
}

/** Sends one message; resolves when the relay has taken it (250 after DATA). Throws MailError. */
export async function sendMail(o: SmtpOptions, message: MailMessage): Promise<void> {
  const { settings: s, timeoutMs = 15_000, totalMs = 4 * timeoutMs } = o;
  const until = Date.now() + totalMs;
  for (const a of [message.from.address, message.to.address])
    if (!ADDRESS_RE.test(a))
      throw new MailError(`${a.replace(/[^\x20-\x7e]/g, '?')} is not an address this server can mail`);
  let socket: net.Socket;
  try {
    socket = await connectGuarded({
      host: s.host,
      port: s.port,
      tls: s.security === 'tls',
      allowedNetworks: o.allowedNetworks,
      timeoutMs,
      lookup: o.lookup,
      ca: o.ca,
    });
  } catch (err) {
    if (err instanceof DestinationRefusedError)
      throw new MailError(`the mail server ${s.display} was refused by the outbound guard: ${err.message}`);
    throw new MailError(`could not connect to the mail server ${s.display}: ${(err as Error).message}`);
  }
  const c = new Conversation(socket, s.host, timeoutMs, until);
  try {
    await c.expect('the greeting', 2);
    const name = os.hostname().replace(/[^A-Za-z0-9.-]/g, '') || 'leadgate';
    let ehlo = await c.command(`EHLO ${name}`, 2);
    if (s.security === 'starttls') {
      if (!offers(ehlo, 'STARTTLS')) throw new MailError(`the mail server ${s.display} does not offer STARTTLS`);
      await c.command('STARTTLS', 2);
      await c.upgrade(o.ca);
      ehlo = await c.command(`EHLO ${name}`, 2);
    }
    if (s.username !== null && s.password !== null) await authenticate(c, ehlo, s.username, s.password);
    await c.command(`MAIL FROM:<${message.from.address}>`, 2, 'MAIL FROM');
    await c.command(`RCPT TO:<${message.to.address}>`, 2, 'RCPT TO');
    await c.command('DATA', 3);
    await c.command(dataBlock(buildMessage(message)), 2, 'the message');
    await c.command('QUIT', 2).catch(() => {}); // the message is taken; a rude goodbye changes nothing
  } finally {
    c.close();
  }
}
