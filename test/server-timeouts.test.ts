// The HTTP server's own limits, over real sockets on loopback: a client that sends its request
// slowly (one byte at a time) or holds a connection idle is cut off within the configured bound,
// and connections beyond MAX_CONNECTIONS are refused, so a few slow clients cannot hold the
// server's sockets and memory for ever (issue 24, finding 11).
import assert from 'node:assert/strict';
import net from 'node:net';
import { test, type TestContext } from 'node:test';
import { buildTestApp, forEachDatabase, type Engine } from './helpers.js';

const LIMITS = {
  REQUEST_TIMEOUT_MS: '1500',
  HEADERS_TIMEOUT_MS: '800',
  KEEP_ALIVE_TIMEOUT_MS: '500',
  MAX_CONNECTIONS: '3',
};
/** Node checks the timeouts on an interval (a tenth of the headers timeout here): allowed on top of each bound. */
const SLACK_MS = 1500;

async function listening(t: TestContext, engine: Engine) {
  const ta = await buildTestApp(t, engine, { env: LIMITS });
  await ta.app.listen({ host: '127.0.0.1', port: 0 });
  return (ta.app.server.address() as net.AddressInfo).port;
}

interface Outcome {
  /** When the server ended the connection, in ms from connecting; null: still open at giveUpMs. */
  closedAfterMs: number | null;
  answer: string;
}

/** Connects, writes `first`, then one byte of `drip` every `everyMs`, until the server hangs up (or giveUpMs). */
function slowClient(
  t: TestContext,
  port: number,
  first: string,
  drip: string,
  everyMs: number,
  giveUpMs = 6000,
): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    t.after(() => socket.destroy());
    let answer = '';
    let i = 0;
    const timer = setInterval(() => {
      if (i < drip.length && !socket.destroyed) socket.write(drip[i++]);
    }, everyMs);
    const done = (closedAfterMs: number | null) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ closedAfterMs, answer });
    };
    const giveUp = setTimeout(() => done(null), giveUpMs);
    socket.on('connect', () => first && socket.write(first));
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.on('error', () => done(Date.now() - started));
    socket.on('close', () => done(Date.now() - started));
  });
}

const body = JSON.stringify({ email: 'owner@example.test', password: 'owner-password-1' });

forEachDatabase('HTTP server limits', (engine) => {
  test('a login body sent one byte at a time is cut off (408) within REQUEST_TIMEOUT_MS', async (t) => {
    const port = await listening(t, engine);
    const head = `POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const got = await slowClient(t, port, head, body, 200);
    assert.ok(got.closedAfterMs !== null, 'the connection is still open after 6 s');
    assert.ok(got.closedAfterMs < 1500 + SLACK_MS, `cut off after ${got.closedAfterMs} ms`);
    assert.match(got.answer, /^HTTP\/1\.1 408 /);
  });

  test('request headers sent one byte at a time are cut off within HEADERS_TIMEOUT_MS', async (t) => {
    const port = await listening(t, engine);
    const got = await slowClient(
      t,
      port,
      '',
      `GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'a'.repeat(100)}\r\n\r\n`,
      100,
    );
    assert.ok(got.closedAfterMs !== null, 'the connection is still open after 6 s');
    assert.ok(got.closedAfterMs < 800 + SLACK_MS, `cut off after ${got.closedAfterMs} ms`);
  });

  test('an idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS', async (t) => {
    const port = await listening(t, engine);
    const got = await slowClient(t, port, 'GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', '', 1000);
    assert.match(got.answer, /^HTTP\/1\.1 200 /);
    // Node waits a second beyond the timeout it advertises (Keep-Alive: timeout=…), so the client hangs up first.
    assert.ok(
      got.closedAfterMs !== null && got.closedAfterMs < 500 + 1000 + SLACK_MS,
      `closed after ${got.closedAfterMs} ms`,
    );
  });

  test('connections beyond MAX_CONNECTIONS are refused; the server answers again once they end', async (t) => {
    const port = await listening(t, engine);
    const held: net.Socket[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const s = net.connect(port, '127.0.0.1');
        held.push(s);
        await new Promise((resolve) => s.once('connect', resolve));
      }
      // Node accepts the TCP connection, then closes it at once without reading a byte.
      const extra = await slowClient(t, port, 'GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', '', 1000, 3000);
      assert.ok(extra.closedAfterMs !== null && extra.closedAfterMs < 1000, `closed after ${extra.closedAfterMs} ms`);
      assert.equal(extra.answer, '', 'no answer beyond the limit');
    } finally {
      // Before the app closes (it waits for every connection to end).
      for (const s of held) s.destroy();
    }
    await new Promise((r) => setTimeout(r, 100));
    const again = await slowClient(
      t,
      port,
      'GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
      '',
      1000,
      3000,
    );
    assert.match(again.answer, /^HTTP\/1\.1 200 /);
  });
});
