import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildTestApp, call, expectProblem, forEachDatabase } from '../../../test/helpers.js';
import { FAKE_INDEX, fakeBuild } from '../../../test/fake-build.js';

forEachDatabase('Serving the dashboard', (engine) => {
  test('client-side routes fall back to index.html, revalidated on every load', async (t) => {
    const { app } = await buildTestApp(t, engine, { webDir: fakeBuild(t) });
    for (const url of ['/', '/login', '/settings/api', '/leads?status=accepted&country=DE', '/index.html']) {
      const res = await call(app, null, { method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assert.match(String(res.headers['content-type']), /^text\/html/, url);
      assert.equal(res.headers['cache-control'], 'no-cache', url);
      assert.equal(res.body, FAKE_INDEX, url);
    }
    // An ETag lets the no-cache revalidation answer 304 without the body.
    const first = await call(app, null, { method: 'GET', url: '/settings/api' });
    assert.ok(first.headers.etag, 'index.html has an ETag');
    const again = await call(app, null, {
      method: 'GET',
      url: '/settings/api',
      headers: { 'if-none-match': String(first.headers.etag) },
    });
    assert.equal(again.statusCode, 304);
    const head = await call(app, null, { method: 'HEAD', url: '/settings/api' });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['cache-control'], 'no-cache');
    assert.equal(head.body, '');
  });

  test('hashed assets are cacheable forever; other files are served as they are', async (t) => {
    const { app } = await buildTestApp(t, engine, { webDir: fakeBuild(t) });
    const asset = await call(app, null, { method: 'GET', url: '/assets/index-AbC123.js' });
    assert.equal(asset.statusCode, 200);
    assert.match(String(asset.headers['content-type']), /javascript/);
    assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(asset.body, 'console.log("app");');

    const icon = await call(app, null, { method: 'GET', url: '/favicon.svg' });
    assert.equal(icon.statusCode, 200);
    assert.match(String(icon.headers['content-type']), /^image\/svg\+xml/);
    assert.equal(icon.headers['cache-control'], 'no-cache');

    // A page from an older build asks for an asset that is gone: a 404, not HTML as JavaScript.
    expectProblem(await call(app, null, { method: 'GET', url: '/assets/index-Old999.js' }), 404, 'not_found');
  });

  test('paths that climb out of the build never reach other files', async (t) => {
    const { app } = await buildTestApp(t, engine, { webDir: fakeBuild(t) });
    for (const url of [
      '/..%2f..%2fpackage.json',
      '/assets/..%2f..%2f..%2fpackage.json',
      '/%2e%2e/%2e%2e/etc/passwd',
      '/assets/%2e%2e/%2e%2e/package.json',
    ]) {
      const res = await call(app, null, { method: 'GET', url });
      assert.ok(
        !res.body.includes('"name"') && !res.body.includes('root:'),
        `${url} leaked: ${res.statusCode} ${res.body.slice(0, 80)}`,
      );
      assert.ok(res.statusCode < 500, `${url}: ${res.statusCode}`);
    }
  });

  test('unknown /api routes still answer problem+json 404, and the SPA is not in the API document', async (t) => {
    const { app } = await buildTestApp(t, engine, { webDir: fakeBuild(t) });
    for (const url of ['/api', '/api/nope', '/api/settings/api', '/api/assets/index-AbC123.js']) {
      const body = expectProblem(await call(app, null, { method: 'GET', url }), 404, 'not_found');
      assert.match(body.detail, /No route GET \/api/);
    }
    // Only GET falls back: other methods outside /api are unknown routes.
    expectProblem(await call(app, null, { method: 'POST', url: '/settings/api', payload: {} }), 404, 'not_found');

    const doc = (await call(app, null, { method: 'GET', url: '/api/openapi.json' })).json();
    const outside = Object.keys(doc.paths).filter((p) => !p.startsWith('/api/'));
    assert.deepEqual(outside, []);
    // The fallback is no route: the router's own answers under /api stay as they were.
    expectProblem(
      await call(app, null, { method: 'GET', url: `/api/roles/${'a'.repeat(201)}` }),
      400,
      'validation_failed',
    );
    // The dashboard is no route; the routes outside /api are Prometheus's /metrics and the
    // tracked autologin links (/go/{token}, the one public route that touches leads).
    assert.deepEqual(
      app.routeTable
        .filter((r) => !r.url.startsWith('/api'))
        .map((r) => r.url)
        .sort(),
      ['/go/:token', '/metrics'],
    );
  });

  test('without a build, / says how to make one instead of failing', async (t) => {
    const missing = join(mkdtempSync(join(tmpdir(), 'leadgate-noweb-')), 'web');
    t.after(() => rmSync(join(missing, '..'), { recursive: true, force: true }));
    const { app } = await buildTestApp(t, engine, { webDir: missing });
    for (const url of ['/', '/settings/api']) {
      const res = await call(app, null, { method: 'GET', url });
      assert.equal(res.statusCode, 503, url);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /npm run build/);
    }
    assert.equal((await call(app, null, { method: 'GET', url: '/api/health' })).statusCode, 200, 'the API still works');
    // Built while the server runs: served from the next request on, no restart needed.
    mkdirSync(missing);
    writeFileSync(join(missing, 'index.html'), FAKE_INDEX);
    const res = await call(app, null, { method: 'GET', url: '/' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, FAKE_INDEX);
  });
});
