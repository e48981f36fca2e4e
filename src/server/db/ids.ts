import { randomFillSync } from 'node:crypto';

let lastMs = 0;
let seq = 0;

// Random bytes drawn 4 KiB at a time: one call into the RNG per 512 ids instead of one per id
// (intake makes several ids per lead).
const pool = Buffer.alloc(4096);
let poolAt = pool.length;
function random8(): Buffer {
  if (poolAt + 8 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  poolAt += 8;
  return pool.subarray(poolAt - 8, poolAt);
}

/**
 * UUIDv7: time-ordered, so keyset pagination by id follows creation order. A per-process
 * counter in the random bits keeps ids made in the same millisecond in order.
 */
export function newId(): string {
  let ms = Date.now();
  if (ms <= lastMs) {
    ms = lastMs;
    seq = (seq + 1) & 0xfff;
    if (seq === 0) ms = ++lastMs;
  } else {
    seq = 0;
  }
  lastMs = ms;
  const b = Buffer.allocUnsafe(16);
  random8().copy(b, 8);
  b.writeUIntBE(ms, 0, 6);
  b[6] = 0x70 | (seq >> 8);
  b[7] = seq & 0xff;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export const nowIso = () => new Date().toISOString();
