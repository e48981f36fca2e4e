import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { accepting, type PartnerHandler, type ReceivedRequest } from './partner-server.js';

// A partner server listening on one port on both loopback addresses (127.0.0.1 and ::1), so that
// every loopback spelling of a URL (localhost, [::1], 2130706433, 0x7f000001, 127.1, 0.0.0.0,
// [::ffff:127.0.0.1]) would reach it if the outbound guard let it through. Tests of the guard
// assert that it received nothing. Answers close the connection, so every call connects anew
// (and passes the guard anew).

export interface LoopbackTrap {
  port: number;
  received: ReceivedRequest[];
  /** http://<host>:<port><path>, host as written (e.g. "[::1]", "2130706433"). */
  url(host: string, path?: string): string;
}

function listen(server: Server, port: number, host: string) {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

export async function startTrap(t: TestContext, handler: PartnerHandler = accepting()): Promise<LoopbackTrap> {
  const received: ReceivedRequest[] = [];
  const onRequest = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        // not JSON
      }
      const r: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        json,
        at: Date.now(),
      };
      received.push(r);
      res.setHeader('connection', 'close');
      Promise.resolve(handler(r, res)).catch(() => res.destroy());
    });
  };
  // The port the kernel gives on 127.0.0.1 may be taken on ::1: try again with another.
  for (let tries = 0; ; tries++) {
    const v4 = createServer(onRequest);
    const v6 = createServer(onRequest);
    await listen(v4, 0, '127.0.0.1');
    const { port } = v4.address() as AddressInfo;
    try {
      await listen(v6, port, '::1');
    } catch (err) {
      await new Promise((r) => v4.close(r));
      if (tries < 5) continue;
      throw err;
    }
    t.after(async () => {
      for (const s of [v4, v6]) {
        s.closeAllConnections();
        await new Promise((r) => s.close(r));
      }
    });
    return { port, received, url: (host, path = '/leads') => `http://${host}:${port}${path}` };
  }
}
