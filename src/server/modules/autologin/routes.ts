import { Type } from 'typebox';
import { clientIp } from '../../auth/guard.js';
import type { App } from '../../types.js';
import { openLink } from './service.js';

// GET /go/{token}: the one public route that touches leads (SECURITY.md). Outside /api (a link
// handed to a lead's browser), so not in the OpenAPI document; rate limited per address in a
// bucket of its own (http/rate-limit.ts); exempt from the account allow-list (leads open it from
// anywhere). Unknown and malformed tokens alike: 404 after the same hash and lookup.

// A single-use link opened again: a plain page, no link. 410 Gone: the link existed and is used
// up, which the lead's browser and any crawler should not retry.
const USED_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Link already used</title></head>
<body style="font-family: sans-serif; max-width: 40rem; margin: 4rem auto">
<h1>This link has already been used</h1>
<p>It opens only once. Please contact the company that sent it to you for a new one.</p>
</body></html>
`;

const NOT_FOUND_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Link not found</title></head>
<body style="font-family: sans-serif; max-width: 40rem; margin: 4rem auto">
<h1>This link is not valid</h1>
</body></html>
`;

export default async function autologinRoutes(app: App) {
  app.get(
    '/go/:token',
    {
      config: { public: true, allowlistExempt: true },
      schema: { params: Type.Object({ token: Type.String() }) },
    },
    async (req, reply) => {
      const { token } = req.params as { token: string };
      const ua = req.headers['user-agent'] ?? '';
      const out = await openLink(app.db, token, clientIp(req), typeof ua === 'string' ? ua : '');
      reply.header('referrer-policy', 'no-referrer').header('cache-control', 'no-store');
      if (out.kind === 'redirect') return reply.redirect(out.url, 302);
      const page = out.kind === 'used' ? USED_PAGE : NOT_FOUND_PAGE;
      return reply
        .status(out.kind === 'used' ? 410 : 404)
        .type('text/html; charset=utf-8')
        .send(page);
    },
  );
}
