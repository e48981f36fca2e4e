import type { Job } from './scheduler.js';

/**
 * The outbox (events/dispatcher.ts): each run wakes the dispatcher's pool, which claims due
 * deliveries under their leases and sends them; shutdown waits for the sends in flight.
 * EVENT_DISPATCH_INTERVAL_MS.
 */
export function eventDispatchJob(dispatcher: { poke(): void; close(): Promise<void> }, everyMs: number): Job {
  return { name: 'event-dispatch', everyMs, run: () => dispatcher.poke(), drain: () => dispatcher.close() };
}
