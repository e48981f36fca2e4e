// STUB — to be written (issue 4, recovery sweep). Interface fixed; see the brief.
import type { DeliveryRunner } from './runner.js';

export async function recoverStale(_runner: DeliveryRunner): Promise<{ resumed: number; failed: number }> {
  return { resumed: 0, failed: 0 };
}
