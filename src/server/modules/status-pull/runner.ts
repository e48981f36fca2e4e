import type { FastifyBaseLogger } from 'fastify';
import type { Agent } from 'undici';
import type { DB } from '../../db/database.js';
import { nowIso } from '../../db/ids.js';
import { recordRun, runPull } from './pull.js';
import { configFromStore } from './stored.js';

// Runs the status pulls that are due (the status-pulls job, jobs/status-pulls.ts), each partner's
// by one process at a time: a pull is claimed by a conditional UPDATE of its lease (a killed
// process's lease runs out and another takes it).

/** Longer than a run can take: max_pages × timeout (100 × 60 s) is the worst case, and rare. */
const LEASE_MS = 10 * 60_000;

export class StatusPuller {
  private running: Promise<number> | null = null;
  private closed = false;

  constructor(
    private readonly db: DB,
    readonly agent: Agent,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Runs every due pull (sequentially); how many ran. */
  runDue(): Promise<number> {
    this.running ??= this.runAll().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async runAll(): Promise<number> {
    const now = nowIso();
    const due = await this.db
      .selectFrom('partner_status_pulls as s')
      .innerJoin('partners as p', 'p.id', 's.partner_id')
      .select(['s.partner_id', 's.config', 's.lease_until', 'p.name'])
      .where('s.next_run_at', '<=', now)
      .where((eb) => eb.or([eb('s.lease_until', 'is', null), eb('s.lease_until', '<', now)]))
      .where('p.archived_at', 'is', null)
      .limit(50)
      .execute();
    let ran = 0;
    for (const d of due) {
      if (this.closed) break;
      const config = configFromStore(d.config);
      if (!config.enabled) continue;
      const claim = await this.db
        .updateTable('partner_status_pulls')
        .set({ lease_until: new Date(Date.now() + LEASE_MS).toISOString() })
        .where('partner_id', '=', d.partner_id)
        .where((eb) => (d.lease_until === null ? eb('lease_until', 'is', null) : eb('lease_until', '=', d.lease_until)))
        .executeTakeFirst();
      if (Number(claim.numUpdatedRows) === 0) continue; // another process has it
      const partner = { id: d.partner_id, name: d.name };
      try {
        const { run } = await runPull(this.db, this.agent, partner, config, { dryRun: false });
        await recordRun(this.db, partner, config, run, this.log);
        ran++;
      } catch (err) {
        this.log.error({ err, partnerId: d.partner_id }, 'status pull failed with an internal error');
      }
    }
    return ran;
  }

  async close() {
    this.closed = true;
    while (this.running) await this.running.catch(() => {});
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    statusPull: StatusPuller;
  }
}
