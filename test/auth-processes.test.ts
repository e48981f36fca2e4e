// Auth stays exact across server processes with the auth cache on (issue 14): three servers share
// one PostgreSQL database, a client goes round-robin over them, and every process has the key,
// the session and the allow-list in its cache when each is changed through one of them. The
// next request on every process sees the change.
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe } from 'node:test';
import { POSTGRES_URL, postgresOnly } from './helpers.js';
import { ADMIN, ServerClient, serversOnOnePostgres } from './processes.js';

describe('auth across three server processes [postgres]', () => {
  postgresOnly(
    'revoking a key, disabling an operator and changing the allow-list hold on the next request on every process',
    async (t) => {
      const { admin, clients, servers } = await serversOnOnePostgres(t, POSTGRES_URL, 3);

      const role = await admin.create('/api/roles', { name: 'Desk', permissions: ['leads:view'] });
      const desk = { email: 'desk@example.test', password: 'desk-password-123', name: 'Dana Desk', role_id: role.id };
      const operator = await admin.create('/api/operators', { ...desk, current_password: ADMIN.password });
      const login = await clients[1].send('POST', '/api/auth/login', { email: desk.email, password: desk.password });
      assert.equal(login.status, 200, login.text);
      const session = login.json().token as string;
      const key = await admin.create('/api/api-keys', { name: 'Script', scopes: ['leads:view'] });

      // Round-robin: every process answers (and so caches) each credential.
      const everywhere = async (token: string, url = '/api/leads/search') =>
        Promise.all(clients.map((c) => c.send('GET', url, undefined, token)));
      const statuses = async (token: string) => (await everywhere(token)).map((r) => r.status);
      assert.deepEqual(await statuses(key.secret), [200, 200, 200]);
      assert.deepEqual(await statuses(session), [200, 200, 200]);

      // A key revoked through process 3: refused on all three at once.
      const revoked = await new ServerClient(servers[2].port).login();
      t.after(() => revoked.close());
      const revoke = await revoked.send('POST', `/api/api-keys/${key.id}/revoke`);
      assert.equal(revoke.status, 200, revoke.text);
      assert.deepEqual(await statuses(key.secret), [401, 401, 401]);

      // The operator disabled through process 1: the session is refused on all three.
      const disabled = await admin.send('PATCH', `/api/operators/${operator.id}`, {
        status: 'disabled',
        current_password: ADMIN.password,
      });
      assert.equal(disabled.status, 200, disabled.text);
      assert.deepEqual(await statuses(session), [401, 401, 401]);

      // The allow-list narrowed through process 2 to 127.0.0.1 alone: a client on 127.0.0.2 (still
      // loopback) was let in by every process and is refused by every process from the next request.
      const admin2 = await new ServerClient(servers[1].port).login();
      t.after(() => admin2.close());
      const fromOther = (port: number) =>
        new Promise<number>((resolve, reject) => {
          const req = http.get(
            {
              host: '127.0.0.1',
              localAddress: '127.0.0.2',
              port,
              path: '/api/auth/whoami',
              agent: false,
              headers: { authorization: `Bearer ${admin2.token}` },
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode!));
            },
          );
          req.on('error', reject);
        });
      const others = () => Promise.all(servers.map((s) => fromOther(s.port)));
      assert.deepEqual(await others(), [200, 200, 200]);
      const narrowed = await admin2.send('PUT', '/api/settings/security', { ip_allowlist: ['127.0.0.1/32'] });
      assert.equal(narrowed.status, 200, narrowed.text);
      assert.deepEqual(await others(), [403, 403, 403]);
      assert.deepEqual(await statuses(admin2.token), [200, 200, 200], '127.0.0.1 itself is still let in');
    },
  );
});
