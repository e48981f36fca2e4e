import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

// Real partner HTTP servers on loopback, for distribution tests. Each records what it received.

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** body parsed as JSON, when it is JSON */
  json: any;
  at: number;
}

export type PartnerHandler = (req: ReceivedRequest, res: ServerResponse) => void | Promise<void>;

export interface TestPartner {
  /** http://127.0.0.1:<port>/leads */
  url: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

let serial = 0;

/** Answers 200 {"success":true,"data":{"id","autologin_url"}}: the shape defaultIntegration() reads. */
export const accepting =
  (delayMs = 0): PartnerHandler =>
  async (req, res) => {
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    const id = `P-${++serial}`;
    json(res, 200, {
      success: true,
      data: {
        id,
        autologin_url: `https://broker.example/login/${id}?email=${encodeURIComponent(req.json?.email ?? '')}`,
      },
    });
  };

/**
 * A partner that holds every request until the test calls release(), then answers as accepting():
 * "the partner has not answered yet" is a fact of the test, not a race against a delay.
 * `arrived` resolves once the first request is in. Released anyway when the test ends.
 */
export function gated(t?: TestContext): { handler: PartnerHandler; release: () => void; arrived: Promise<void> } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let arrive!: () => void;
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  t?.after(release);
  return {
    handler: async (req, res) => {
      arrive();
      await gate;
      if (!res.destroyed) return accepting()(req, res);
    },
    release,
    arrived,
  };
}

/** Answers `status` with {"success":false,"error":…} (default 200: a "soft" rejection). */
export const rejecting =
  (status = 200, error = 'duplicate in broker CRM'): PartnerHandler =>
  (_req, res) =>
    json(res, status, { success: false, error });

/** Never answers within `ms` (longer than any test timeout). */
export const slow =
  (ms = 10_000): PartnerHandler =>
  async (req, res) => {
    await new Promise((r) => setTimeout(r, ms));
    if (!res.destroyed) return accepting()(req, res);
  };

/** 200 with a body that is not JSON. */
export const malformed = (): PartnerHandler => (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"success": tru');
};

export function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startPartner(t: TestContext | null, handler: PartnerHandler): Promise<TestPartner> {
  const received: ReceivedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let parsed: unknown = undefined;
      try {
        parsed = body ? JSON.parse(body) : undefined;
      } catch {
        // not JSON
      }
      const r: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        json: parsed,
        at: Date.now(),
      };
      received.push(r);
      Promise.resolve(handler(r, res)).catch(() => res.destroy());
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  t?.after(close);
  return { url: `http://127.0.0.1:${port}/leads`, received, close };
}

/** A loopback URL where nothing listens (connection refused). */
export async function downUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/leads`;
}

/** An integration (API input form) for the partners above. */
export function defaultIntegration(url: string, extra: Record<string, unknown> = {}) {
  return {
    method: 'POST',
    url,
    headers: { 'X-Api-Key': 'partner-secret-key-123456' },
    body_template: {
      firstName: '{{lead.first_name}}',
      lastName: '{{lead.last_name}}',
      email: '{{lead.email}}',
      phone: '{{lead.phone}}',
      country: '{{lead.country}}',
      ip: '{{lead.ip}}',
      clickId: '{{lead.id}}',
    },
    success_path: 'success',
    lead_id_path: 'data.id',
    autologin_path: 'data.autologin_url',
    timeout_ms: 2000,
    ...extra,
  };
}
