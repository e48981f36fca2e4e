import type { FastifyBaseLogger } from 'fastify';
import { rolePermissions, roleScope } from '../../auth/authenticate.js';
import type { DB } from '../../db/database.js';
import { HttpProblem } from '../../http/errors.js';
import type { Principal } from '../../types.js';
import { audit, SYSTEM, type Actor } from '../audit/service.js';
import { createInjection } from '../injections/service.js';
import { creatorOf, enabledRules, hasRun, insertRun, type RuleRow } from './queries.js';
import { latestOccurrence, MAX_LATE_MS } from './schedule.js';
import { draftOf, injectionBody } from './service.js';

// The rules' runner: each tick (the injection-rules job, INJECTION_RULE_INTERVAL_MS) finds every
// enabled rule's latest scheduled occurrence and, when it has not run and is less than
// MAX_LATE_MS late (after downtime only the latest missed one runs, once), makes its re-injection
// job with the rule's creator's rights now, the window relative to the occurrence. Its run row
// (primary key rule + occurrence) is inserted in the job's transaction: two processes, one job.

const iso = (ms: number) => new Date(ms).toISOString();

/** Another process (or tick) recorded this occurrence first: the job's transaction rolls back. */
class AlreadyRun extends Error {}

type Creator = NonNullable<Awaited<ReturnType<typeof creatorOf>>>;

function principalOf(c: Creator): Principal {
  const permissions = rolePermissions(c);
  return {
    operator: {
      id: c.id,
      email: c.email,
      name: c.name,
      role_id: c.role_id,
      role_name: c.role_name,
      status: c.status,
      timezone: c.timezone,
    },
    via: 'session',
    permissions,
    keyScopes: permissions,
    rolePermissions: permissions,
    isAdmin: c.builtin === 1,
    scope: roleScope(c),
    sessionId: null,
    apiKeyId: null,
  };
}

/** Why the creator cannot run the rule now, or null. */
function creatorProblem(c: Creator | undefined): string | null {
  if (!c) return 'its creator no longer exists';
  if (c.status !== 'active') return 'its creator is disabled';
  if (!rolePermissions(c).has('leads:edit')) return "its creator's role no longer holds leads:edit";
  return null;
}

export class RuleRunner {
  constructor(private readonly deps: { db: DB; log: FastifyBaseLogger }) {}

  /** One tick at `now` (tests pass a clock of their own). */
  async tick(now = Date.now(), signal?: AbortSignal): Promise<void> {
    const { db, log } = this.deps;
    for (const rule of await enabledRules(db)) {
      if (signal?.aborted) return;
      const at = latestOccurrence(draftOf(rule).schedule, now);
      if (at === null || at < Date.parse(rule.armed_at) || now - at >= MAX_LATE_MS) continue;
      if (await hasRun(db, rule.id, iso(at))) continue;
      try {
        await this.run(rule, at, now);
      } catch (err) {
        log.error({ err, rule: rule.id }, 'injection rule: the run failed with an internal error');
      }
    }
  }

  private async run(rule: RuleRow, at: number, now: number) {
    const { db } = this.deps;
    const creator = rule.created_by === null ? undefined : await creatorOf(db, rule.created_by);
    const problem = creatorProblem(creator);
    if (problem) return this.skip(rule, at, now, problem);
    const actor: Actor = { principal: principalOf(creator!), ip: null };
    const claim = async (tx: DB, jobId: string) => {
      const run = { rule_id: rule.id, occurrence_at: iso(at), job_id: jobId, skipped: null, at: iso(now) };
      if (!(await insertRun(tx, run))) throw new AlreadyRun();
      await audit(tx, actor, {
        action: 'injection_rule.ran',
        via: 'system',
        target_type: 'injection_rule',
        target_id: rule.id,
        details: { occurrence_at: iso(at), injection_id: jobId },
      });
    };
    try {
      await createInjection(db, actor, injectionBody(draftOf(rule), at), { ruleId: rule.id, claim });
    } catch (err) {
      if (err instanceof AlreadyRun) return;
      // The rule no longer holds for its creator (a flow archived, a scope narrowed): skipped, with why.
      if (err instanceof HttpProblem && err.errors)
        return this.skip(rule, at, now, err.errors.map((e) => `${e.field} ${e.message}`).join('; '));
      throw err;
    }
  }

  private async skip(rule: RuleRow, at: number, now: number, reason: string) {
    await this.deps.db.transaction().execute(async (tx) => {
      const run = { rule_id: rule.id, occurrence_at: iso(at), job_id: null, skipped: reason, at: iso(now) };
      if (!(await insertRun(tx, run))) return;
      await audit(tx, SYSTEM, {
        action: 'injection_rule.skipped',
        target_type: 'injection_rule',
        target_id: rule.id,
        details: { occurrence_at: iso(at), reason },
      });
    });
  }
}
