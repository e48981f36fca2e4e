import type { App } from '../types.js';

// Background work that can wait (a CSV import's chunks) yields to live traffic: before its next
// piece it waits until no request is being answered. Only requests younger than LIVE_MS count, so
// a long stream (an export, a live-refresh connection, an upload) never holds the work back.

/** A request in flight longer than this is a stream, not live traffic waiting for the server. */
const LIVE_MS = 2_000;
/** How often a waiter looks again. */
const POLL_MS = 2;

export interface LiveRequests {
  /**
   * First lets what came in meanwhile run (one turn of the event loop, or restMs: a loop of awaits
   * on SQLite's synchronous statements never gives the server one otherwise), then resolves once
   * no live request is in flight, or after maxWaitMs at the latest. Work that rests as long as its
   * last piece took leaves live traffic at least half of the event loop.
   */
  quiet(maxWaitMs: number, restMs?: number): Promise<void>;
}

export function installLiveRequests(app: App, liveMs = LIVE_MS): LiveRequests {
  const started = new Map<string, number>();
  app.addHook('onRequest', async (req) => {
    started.set(req.id, Date.now());
  });
  const done = async (req: { id: string }) => {
    started.delete(req.id);
  };
  app.addHook('onResponse', done);
  app.addHook('onRequestAbort', done);
  const busy = () => {
    const since = Date.now() - liveMs;
    for (const at of started.values()) if (at > since) return true;
    return false;
  };
  return {
    async quiet(maxWaitMs, restMs = 0) {
      await new Promise((resolve) => (restMs > 0 ? setTimeout(resolve, restMs) : setImmediate(resolve)));
      const until = Date.now() + maxWaitMs;
      while (busy() && Date.now() < until) await new Promise((r) => setTimeout(r, POLL_MS));
    },
  };
}
