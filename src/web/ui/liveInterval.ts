/** How often a live screen (Leads, Overview) refetches while its tab is visible; bench/live-refresh.ts measures what that costs. */
export const LIVE_INTERVAL_MS = 30_000;
