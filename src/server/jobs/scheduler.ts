import type { FastifyBaseLogger } from 'fastify';
import type { App } from '../types.js';

// Background work: every job is a file in this folder made into a Job, added to the one
// scheduler in app.ts. The scheduler starts them when the server is ready and stops and drains
// them before anything they use (the database, the outbound agents) is closed.

export interface Job {
  /** Unique and kebab-case: names the job in logs and its lease. */
  name: string;
  /** Milliseconds between runs, from its setting; 0 switches the job off in this process. */
  everyMs: number;
  /** Run once as soon as the server is ready, then every everyMs (default), or wait a first interval. */
  runAtStart?: boolean;
  /** One run. The signal aborts at shutdown: stop early between units of work, never half-way one. */
  run(signal: AbortSignal): Promise<unknown> | unknown;
  /** Waits for work a run set going that outlives it (sends in flight); called once at shutdown. */
  drain?(): Promise<void>;
}

export class Scheduler {
  private readonly jobs = new Map<string, Job>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly running = new Map<string, Promise<unknown>>();
  private readonly stopping = new AbortController();
  private started = false;

  constructor(private readonly log: FastifyBaseLogger) {}

  add(job: Job): void {
    if (this.jobs.has(job.name)) throw new Error(`a job named ${job.name} is already scheduled`);
    this.jobs.set(job.name, job);
    if (this.started) this.schedule(job);
  }

  /** The jobs and how often each runs here (0: off). */
  list(): { name: string; everyMs: number }[] {
    return [...this.jobs.values()].map((j) => ({ name: j.name, everyMs: j.everyMs }));
  }

  start(): void {
    if (this.started || this.stopping.signal.aborted) return;
    this.started = true;
    for (const job of this.jobs.values()) this.schedule(job);
  }

  /** Runs a job now, or joins the run in progress (a job never overlaps itself). */
  runNow(name: string): Promise<unknown> {
    const job = this.jobs.get(name);
    if (!job) throw new Error(`no job named ${name}`);
    if (this.stopping.signal.aborted) return Promise.resolve();
    let run = this.running.get(name);
    if (!run) {
      run = Promise.resolve()
        .then(() => job.run(this.stopping.signal))
        .catch((err) => this.log.error({ err, job: name }, `background job ${name} failed`))
        .finally(() => this.running.delete(name));
      this.running.set(name, run);
    }
    return run;
  }

  /** Runs a job every everyMs from now on instead of its setting (tests; 0 stops it). */
  reschedule(name: string, everyMs: number): void {
    const job = this.jobs.get(name);
    if (!job) throw new Error(`no job named ${name}`);
    clearInterval(this.timers.get(name));
    this.timers.delete(name);
    job.everyMs = everyMs;
    if (this.started) this.schedule(job);
  }

  /** Stops every timer, aborts the runs in progress and waits for them and for each job's drain. */
  async stop(): Promise<void> {
    this.stopping.abort();
    for (const timer of this.timers.values()) clearInterval(timer);
    this.timers.clear();
    while (this.running.size) await Promise.allSettled([...this.running.values()]);
    await Promise.allSettled([...this.jobs.values()].map((j) => j.drain?.()));
  }

  private schedule(job: Job) {
    if (job.everyMs <= 0 || this.stopping.signal.aborted) return;
    if (job.runAtStart !== false) void this.runNow(job.name);
    const timer = setInterval(() => void this.runNow(job.name), job.everyMs);
    timer.unref();
    this.timers.set(job.name, timer);
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    jobs: Scheduler;
  }
}

/**
 * app.jobs: started when the app is ready; stopped and drained in preClose, before the onClose
 * hooks close what the jobs use.
 */
export function installJobs(app: App): Scheduler {
  const scheduler = new Scheduler(app.log);
  app.decorate('jobs', scheduler);
  app.addHook('onReady', async () => scheduler.start());
  app.addHook('preClose', async () => scheduler.stop());
  return scheduler;
}
