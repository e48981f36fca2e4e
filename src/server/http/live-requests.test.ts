import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import type { App } from '../types.js';
import { installLiveRequests } from './live-requests.js';

// The import worker waits on quiet() between chunks (modules/imports/worker.ts): over real HTTP
// on loopback, it must hold while a request is being answered, and never for long.

async function server(t: { after(fn: () => Promise<unknown>): void }, liveMs = 2_000) {
  const app = Fastify();
  const live = installLiveRequests(app as unknown as App, liveMs);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let arrive!: () => void;
  // The handler runs after onRequest: from then on the server counts the request as in flight.
  // (A fixed sleep instead failed CI on a loaded machine: the request had not arrived yet.)
  const arrived = new Promise<void>((r) => (arrive = r));
  app.get('/held', async () => {
    arrive();
    await held;
    return { ok: true };
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  t.after(() => app.close());
  return { live, base, release, arrived };
}

const settled = async (p: Promise<unknown>, ms: number) =>
  Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), ms))]);

test('quiet() resolves at once with no request in flight', async (t) => {
  const { live } = await server(t);
  assert.equal(await settled(live.quiet(5_000), 50), true);
});

test('quiet() waits while a request is answered and resolves once it is', async (t) => {
  const { live, base, release, arrived } = await server(t);
  const answer = fetch(`${base}/held`);
  await arrived; // the request is in flight
  const quiet = live.quiet(5_000);
  assert.equal(await settled(quiet, 200), false, 'held while the request is in flight');
  release();
  assert.equal((await answer).status, 200);
  assert.equal(await settled(quiet, 200), true, 'resolved once it was answered');
});

test('quiet() waits at most maxWaitMs', async (t) => {
  const { live, base, release, arrived } = await server(t);
  const answer = fetch(`${base}/held`);
  await arrived;
  const started = Date.now();
  await live.quiet(150);
  const waited = Date.now() - started;
  assert.ok(waited >= 140 && waited < 1_000, `waited ${waited} ms`);
  release();
  await answer;
});

test('a request in flight longer than the live window (a stream) does not hold it', async (t) => {
  const { live, base, release, arrived } = await server(t, 100);
  const answer = fetch(`${base}/held`);
  await arrived;
  assert.equal(await settled(live.quiet(5_000), 20), false, 'young: held');
  assert.equal(await settled(live.quiet(5_000), 300), true, 'older than the window: not live traffic');
  release();
  await answer;
});
