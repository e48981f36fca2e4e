// The jobs room: one scheduler runs every background job, never overlapping itself, and drains
// them on shutdown; a lease lets one process at a time do a job's work on a shared database.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { buildTestApp, emptyDatabase, forEachDatabase } from '../../../test/helpers.js';
import { openDatabase } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { withLease } from './lease.js';
import { Scheduler } from './scheduler.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quiet = pino({ level: 'silent' });

test('a job runs at start and then every interval, never beside itself; an interval of 0 is off', async () => {
  const s = new Scheduler(quiet);
  let runs = 0;
  let inside = 0;
  let mostInside = 0;
  s.add({
    name: 'slow',
    everyMs: 20,
    run: async () => {
      runs++;
      mostInside = Math.max(mostInside, ++inside);
      await sleep(70);
      inside--;
    },
  });
  let offRuns = 0;
  s.add({ name: 'off', everyMs: 0, run: () => offRuns++ });
  assert.throws(() => s.add({ name: 'off', everyMs: 5, run: () => {} }), /already scheduled/);
  s.start();
  await sleep(300);
  await s.stop();
  assert.ok(runs >= 3 && runs <= 5, `ran ${runs} times in 300 ms at 70 ms a run`);
  assert.equal(mostInside, 1, 'a run never starts while the last one is in progress');
  assert.equal(offRuns, 0);
  assert.deepEqual(s.list(), [
    { name: 'slow', everyMs: 20 },
    { name: 'off', everyMs: 0 },
  ]);
});

test('stop aborts the run in progress, waits for it and for the drain, and runs nothing after', async () => {
  const s = new Scheduler(quiet);
  const seen: string[] = [];
  s.add({
    name: 'work',
    everyMs: 10_000,
    run: async (signal) => {
      seen.push('run');
      while (!signal.aborted) await sleep(5);
      await sleep(50); // the unit of work in hand is finished
      seen.push('run ended');
    },
    drain: async () => {
      await sleep(30);
      seen.push('drained');
    },
  });
  s.start();
  await sleep(20);
  await s.stop();
  assert.deepEqual(seen, ['run', 'run ended', 'drained']);
  await s.runNow('work');
  assert.deepEqual(seen, ['run', 'run ended', 'drained'], 'nothing runs once stopped');
});

test('a failing run is logged and the job goes on', async () => {
  const errors: string[] = [];
  const log = pino({ level: 'error' }, { write: (line: string) => void errors.push(line) });
  const s = new Scheduler(log);
  let runs = 0;
  s.add({
    name: 'flaky',
    everyMs: 15,
    run: () => {
      runs++;
      throw new Error('boom');
    },
  });
  s.start();
  await sleep(100);
  await s.stop();
  assert.ok(runs >= 3, `ran ${runs} times`);
  assert.ok(errors.some((l) => l.includes('flaky') && l.includes('boom')));
});

forEachDatabase('background jobs', (engine) => {
  test('every background job of the server is scheduled, and closing the server drains them', async (t) => {
    const ta = await buildTestApp(t, engine);
    assert.deepEqual(
      ta.app.jobs
        .list()
        .map((j) => j.name)
        .sort(),
      [
        'delivery-recovery',
        'event-dispatch',
        'event-purge',
        'idempotency-purge',
        'imports',
        'injection-rules',
        'injections',
        'provider-log',
        'provider-silence',
        'report-folds',
        'retention',
        'review-alert',
        'status-pulls',
      ],
    );
    const seen: string[] = [];
    ta.app.jobs.add({
      name: 'test-slow',
      everyMs: 60_000,
      run: async () => {
        seen.push('run');
        await sleep(200);
        // Still open: the database answers while the job finishes.
        await ta.db.selectFrom('job_leases').selectAll().execute();
        seen.push('run ended');
      },
      drain: async () => void seen.push('drained'),
    });
    await sleep(20);
    assert.deepEqual(seen, ['run'], 'added to a started scheduler, it runs at once');
    await ta.app.close();
    assert.deepEqual(seen, ['run', 'run ended', 'drained']);
  });

  test('a lease lets one process at a time do the work, and runs out when its holder dies', async (t) => {
    const db = openDatabase(await emptyDatabase(t, engine));
    t.after(() => db.destroy());
    await migrate(db);
    let aInside = false;
    let release!: () => void;
    const a = withLease(
      db,
      'purge',
      60_000,
      () => {
        aInside = true;
        return new Promise<void>((r) => (release = r));
      },
      { holder: 'A' },
    );
    while (!aInside) await sleep(5);
    let bRan = false;
    assert.equal(await withLease(db, 'purge', 60_000, async () => void (bRan = true), { holder: 'B' }), false);
    assert.equal(bRan, false, 'B does not run while A holds the lease');
    release();
    assert.equal(await a, true);
    assert.equal(await withLease(db, 'purge', 60_000, async () => void (bRan = true), { holder: 'B' }), true);
    assert.equal(bRan, true, 'A let go after its work');

    // Kept: the work runs once per lease period whoever asks, until the lease runs out.
    assert.equal(await withLease(db, 'hourly', 150, async () => {}, { holder: 'A', keep: true }), true);
    assert.equal(await withLease(db, 'hourly', 150, async () => {}, { holder: 'B', keep: true }), false);
    await sleep(200);
    assert.equal(await withLease(db, 'hourly', 150, async () => {}, { holder: 'B', keep: true }), true);

    // A holder that fails lets go at once, kept or not.
    await assert.rejects(
      withLease(
        db,
        'broken',
        60_000,
        async () => {
          throw new Error('x');
        },
        { holder: 'A', keep: true },
      ),
      /x/,
    );
    assert.equal(await withLease(db, 'broken', 60_000, async () => {}, { holder: 'B' }), true);
  });
});
