import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply } from 'fastify';
import type { App } from '../types.js';
import type { NotFoundFallback } from './errors.js';

// src/server/http/spa.ts and its build dist/server/http/spa.js are both three levels below
// the project root, so the default resolves to <root>/dist/web from either.
export const DEFAULT_WEB_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../dist/web');

// Vite names everything under assets/ by content hash: a changed file gets a new name, so
// browsers may keep these forever. index.html names the current hashes, so it is revalidated
// on every load (no-cache still allows a 304 through its ETag).
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Leadgate: dashboard not built</title></head>
<body style="font-family: sans-serif; max-width: 40rem; margin: 4rem auto">
<h1>The dashboard has not been built</h1>
<p>Run <code>npm run build</code> (or <code>npm start</code>, which builds what is missing), then reload.</p>
<p>The API is up: see <a href="/api/docs">/api/docs</a>.</p>
</body></html>
`;

const isFile = (p: string) => statSync(p, { throwIfNoEntry: false })?.isFile() ?? false;

/**
 * Serves the built dashboard (dist/web) at `/` as the not-found fallback: a GET or HEAD outside
 * /api that no route matched gets the file it names, else index.html, so a reload on
 * /settings/api works. Not a `/*` route: the router would fall back to it for /api paths too,
 * hiding its own answers (an over-long path parameter). Unknown /api routes, other methods and
 * missing hashed assets keep the problem+json 404. The build is looked for per request, so
 * building while the server runs needs no restart. Registers reply.sendFile; returns the fallback.
 */
export async function installSpa(app: App, webDir = DEFAULT_WEB_DIR): Promise<NotFoundFallback> {
  const root = path.resolve(webDir);
  // serve: false: only reply.sendFile (path checks, ETag, ranges); which file is ours, below.
  await app.register(fastifyStatic, { serve: false, cacheControl: false, dotfiles: 'deny' });

  const send = (reply: FastifyReply, file: string, cacheControl: string) =>
    reply.header('cache-control', cacheControl).sendFile(file, root, { cacheControl: false });

  return (req, reply) => {
    const pathname = req.url.split('?')[0];
    if ((req.method !== 'GET' && req.method !== 'HEAD') || pathname === '/api' || pathname.startsWith('/api/'))
      return undefined;
    if (!isFile(path.join(root, 'index.html'))) {
      return reply.code(503).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(NOT_BUILT_PAGE);
    }
    let rel: string;
    try {
      rel = decodeURIComponent(pathname).replace(/^\/+/, '');
    } catch {
      return undefined; // a bad %-escape names no file
    }
    const file = path.resolve(root, rel);
    const found = file.startsWith(root + path.sep) && isFile(file);
    // A missing hashed asset is a stale page asking for an old build: a 404, not index.html
    // served as JavaScript.
    if (rel.startsWith('assets/')) return found ? send(reply, path.relative(root, file), IMMUTABLE) : undefined;
    return send(reply, found ? path.relative(root, file) : 'index.html', REVALIDATE);
  };
}
