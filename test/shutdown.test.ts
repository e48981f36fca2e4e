// A request that reaches a server already shutting down gets a clear answer: 503 `unavailable`
// as problem+json, with Retry-After and `Connection: close`, so a tracker or a proxy retries
// elsewhere or later. Deterministic: an intake whose partner holds its answer until the test
// releases it keeps the server shutting down, while a slow client completes its request only
// after SIGTERM has landed (a connection with a request begun is not idle, so close() keeps it).
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { defaultIntegration, gated, startPartner } from './partner-server.js';
import { ADMIN, ServerClient, spawnServer, waitFor, waitUntilUp } from './processes.js';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Splits what a server wrote on one socket into its responses (each with a content-length). */
function parseResponses(raw: string): RawResponse[] {
  const out: RawResponse[] = [];
  let rest = raw;
  while (rest.length) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const i = l.indexOf(':');
      headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const body = Buffer.from(rest.slice(end + 4), 'utf8')
      .subarray(0, length)
      .toString('utf8');
    out.push({ status: Number(statusLine.split(' ')[1]), headers, body });
    rest = Buffer.from(rest.slice(end + 4), 'utf8')
      .subarray(length)
      .toString('utf8');
  }
  return out;
}

/** A raw connection to the server: what it has received so far, and when it closed. */
async function openSocket(t: TestContext, port: number) {
  const socket = net.connect(port, '127.0.0.1');
  t.after(() => socket.destroy());
  let raw = '';
  socket.setEncoding('utf8').on('data', (c: string) => (raw += c));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  await new Promise<void>((resolve, reject) => socket.once('connect', () => resolve()).once('error', reject));
  return { socket, closed, raw: () => raw };
}

describe('shutdown [sqlite]', () => {
  test('a request read after SIGTERM answers 503 unavailable with Retry-After; the one in flight completes', async (t) => {
    const partner = gated(t);
    const remote = await startPartner(t, partner.handler);
    const child = await spawnServer(t, {
      LEADGATE_ADMIN_EMAIL: ADMIN.email,
      LEADGATE_ADMIN_PASSWORD: ADMIN.password,
      LOG_LEVEL: 'info',
    });
    await waitUntilUp(child);
    const api = await new ServerClient(child.port).login();
    t.after(() => api.close());
    const p = await api.create('/api/partners', { name: 'Held', integration: defaultIntegration(remote.url) });
    const flow = await api.create('/api/flows', { name: 'Main', targets: [{ partner_id: p.id, priority: 1 }] });
    const provider = await api.create('/api/traffic-providers', { name: 'Affiliate' });
    await api.create('/api/campaigns', {
      name: 'Campaign',
      traffic_provider_id: provider.id,
      flow_id: flow.id,
      payout: { model: 'cpl', amount: 10 },
    });

    const lead = JSON.stringify({
      first_name: 'Late',
      last_name: 'Comer',
      email: 'late@example.com',
      phone: '+4915112345678',
      country: 'DE',
      ip: '198.51.100.7',
    });
    // A: an intake held in flight by its partner, which keeps the server shutting down, not gone.
    const a = await openSocket(t, child.port);
    a.socket.write(
      `POST /api/intake/leads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${provider.token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(lead)}\r\n\r\n${lead}`,
    );
    // B: a slow client whose request has begun (so its connection is not idle) but not ended.
    const b = await openSocket(t, child.port);
    b.socket.write('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await partner.arrived;
    child.proc.kill('SIGTERM');
    await waitFor(() => child.out.some((l) => l.includes('shutting down')), 'the server to begin its shutdown');
    b.socket.write('\r\n'); // the request is complete only now, after the shutdown began
    await b.closed;
    partner.release();
    await a.closed;

    const [late] = parseResponses(b.raw());
    assert.ok(late, `an answer to the late request, got: ${b.raw()}`);
    assert.equal(late.status, 503, late.body);
    assert.match(late.headers['content-type'] ?? '', /^application\/problem\+json/);
    assert.equal(JSON.parse(late.body).code, 'unavailable');
    assert.match(late.headers['retry-after'] ?? '', /^\d+$/, 'Retry-After says when to come back');
    assert.equal(late.headers.connection, 'close', 'the client is told to hang up');
    const [intake] = parseResponses(a.raw());
    assert.ok(intake, `an answer to the intake, got: ${a.raw()}`);
    assert.equal(intake.status, 201, intake.body);
    assert.equal(JSON.parse(intake.body).status, 'delivered', 'the lead in flight was delivered, not dropped');
    const { code } = await child.exited;
    assert.equal(code, 0, child.err());
  });
});
