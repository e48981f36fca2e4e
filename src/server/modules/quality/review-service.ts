// The review queue's use cases (issue 29, item 3). A traffic provider's or a flow's review rule
// (review-rule.ts) makes intake store a flagged lead `held` instead of routing it; its provider is
// answered `pending`. An operator with leads:edit approves held leads (they are routed as if they
// arrived now: released to the delivery recovery sweep, which claims each once across processes)
// or rejects them with a reason the provider is told (intake's answer, the portal, its log, and
// its postbacks through lead.rejected). Nothing moves a lead that is no longer held, so two
// reviewers never both decide one lead.
import type { DB } from '../../db/database.js';
import { nowIso } from '../../db/ids.js';
import { providerFact, recordProviderFacts } from '../../db/provider-facts.js';
import { emitEvent } from '../../events/emit.js';
import { principalOf } from '../../types.js';
import { audit, type Actor } from '../audit/service.js';
import { UNSCOPED } from '../../db/scope.js';
import { heldByProvider, leadsAmong, oldestHeld, rejectHeld, releaseHeld } from './review-queries.js';
import { readQualitySettings } from './settings-service.js';

/** Leads one approval or rejection takes at most. */
export const MAX_REVIEW_IDS = 500;

export async function reviewQueue(db: DB, actor: Actor) {
  const { scope } = principalOf(actor);
  const [rows, settings] = await Promise.all([heldByProvider(db, scope), readQualitySettings(db)]);
  const providers = rows.map((r) => ({
    traffic_provider_id: r.traffic_provider_id,
    traffic_provider_name: r.name,
    held: Number(r.held),
    oldest_held_at: String(r.oldest_held_at),
  }));
  return {
    held: providers.reduce((n, p) => n + p.held, 0),
    oldest_held_at: providers.reduce<string | null>(
      (o, p) => (o === null || p.oldest_held_at < o ? p.oldest_held_at : o),
      null,
    ),
    alert_after_minutes: settings.review_alert_minutes,
    providers,
  };
}

export interface ReviewOutcome {
  /** The leads this call moved. */
  done: string[];
  /** The others, each with why it was left as it is. */
  skipped: { id: string; reason: string }[];
}

/** Which of the ids the reader may act on; the rest are named with why not. */
async function reviewable(db: DB, actor: Actor, ids: string[]) {
  const unique = [...new Set(ids)];
  const found = new Map((await leadsAmong(db, unique, principalOf(actor).scope)).map((l) => [l.id, l]));
  const skipped: ReviewOutcome['skipped'] = [];
  const held: string[] = [];
  for (const id of unique) {
    const lead = found.get(id);
    if (!lead) skipped.push({ id, reason: 'no such lead' });
    else if (lead.status !== 'held') skipped.push({ id, reason: `the lead is ${lead.status}, not held for review` });
    else held.push(id);
  }
  return { held, skipped };
}

/** Leads another reviewer decided between our read and our update. */
const decidedMeanwhile = (ids: string[], moved: Set<string>) =>
  ids.filter((id) => !moved.has(id)).map((id) => ({ id, reason: 'decided by someone else just now' }));

/**
 * Approves held leads: they are routed as if they arrived now (their flow, caps and working
 * hours of now). `route` starts the delivery sweep that takes them (app.delivery.sweepSoon).
 */
export async function approveHeld(db: DB, route: () => void, actor: Actor, ids: string[]): Promise<ReviewOutcome> {
  const { held, skipped } = await reviewable(db, actor, ids);
  if (!held.length) return { done: [], skipped };
  const moved = await db.transaction().execute(async (tx) => {
    const rows = await releaseHeld(tx, held, nowIso());
    if (rows.length)
      await audit(tx, actor, {
        action: 'lead.review_approved',
        target_type: 'lead',
        ...(rows.length === 1 ? { target_id: rows[0].id } : {}),
        details: { lead_ids: rows.map((r) => r.id) },
      });
    return new Set(rows.map((r) => r.id));
  });
  if (moved.size) route();
  return { done: held.filter((id) => moved.has(id)), skipped: [...skipped, ...decidedMeanwhile(held, moved)] };
}

/** Rejects held leads with a reason their provider is told (as it is: write it for them). */
export async function rejectHeldLeads(db: DB, actor: Actor, ids: string[], reason: string): Promise<ReviewOutcome> {
  const { held, skipped } = await reviewable(db, actor, ids);
  if (!held.length) return { done: [], skipped };
  const text = reason.trim();
  const moved = await db.transaction().execute(async (tx) => {
    const at = nowIso();
    const rows = await rejectHeld(tx, held, text, at);
    // The provider's log: what it was told, as intake tells a refusal.
    await recordProviderFacts(
      tx,
      rows.map((r) => providerFact(r.traffic_provider_id, r.id, 'refused', { status: 'rejected', reason: text }, at)),
    );
    if (rows.length)
      await audit(tx, actor, {
        action: 'lead.review_rejected',
        target_type: 'lead',
        ...(rows.length === 1 ? { target_id: rows[0].id } : {}),
        details: { lead_ids: rows.map((r) => r.id), reason: text },
      });
    return new Set(rows.map((r) => r.id));
  });
  return { done: held.filter((id) => moved.has(id)), skipped: [...skipped, ...decidedMeanwhile(held, moved)] };
}

/**
 * The queue's alert: for each traffic provider whose oldest held lead has waited longer than the
 * quality settings' review_alert_minutes, review_queue.waiting, once per oldest lead. Returns how
 * many were raised (the review-queue job, one process at a time).
 */
export async function alertWaitingReviews(db: DB, now = Date.now()): Promise<number> {
  const { review_alert_minutes: minutes } = await readQualitySettings(db);
  if (minutes === null) return 0;
  const before = new Date(now - minutes * 60_000).toISOString();
  const waiting = (await heldByProvider(db, UNSCOPED)).filter((p) => String(p.oldest_held_at) < before);
  for (const p of waiting) {
    const oldest = await oldestHeld(db, p.traffic_provider_id);
    if (!oldest) continue; // decided since
    await emitEvent(db, {
      type: 'review_queue.waiting',
      traffic_provider_id: p.traffic_provider_id,
      data: { held: Number(p.held), oldest_held_at: oldest.created_at, minutes, name: p.name },
      dedupe_key: `review_queue.waiting:${p.traffic_provider_id}:${oldest.id}`,
    });
  }
  return waiting.length;
}
