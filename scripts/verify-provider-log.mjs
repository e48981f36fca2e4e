#!/usr/bin/env node
// Verifies a traffic provider's Leadgate log (issue 27). Plain Node (18+), standard library only:
// copy this one file anywhere and run it.
//
// Usage:
//   node verify-provider-log.mjs --saved <file> [--current <file> | --url <base URL> --key <portal API key>]
//                                [--checkpoint <file>] [--public-key <file>]
//
//   --saved <file>       the copy you saved earlier: JSON lines (one entry per line), a JSON array
//                        of entries, or the JSON pages GET /api/portal/log answers ({"data": [...]}),
//                        one page per line or several concatenated.
//   --current <file>     today's log, in the same forms; or instead
//   --url, --key         fetch today's log from the server (GET <url>/api/portal/log?after=…,
//                        Authorization: Bearer <key>), page by page.
//   --checkpoint <file>  a checkpoint (GET /api/portal/checkpoints/latest) to check; with --url and
//                        no --checkpoint, the latest one is fetched.
//   --public-key <file>  the published key (PEM, or the JSON of GET /api/portal/public-key). With
//                        --url and no --public-key, fetched (better: keep your own copy, fetched once).
//
// What it checks, and the first failure it names (seq and why), exiting 1:
//   1. each copy on its own: seqs run 1, 2, 3 …; every entry's hash is the SHA-256 of its
//      canonical form; every prev_hash is the hash of the entry before (the first: 64 zeros);
//   2. the saved copy is a prefix of today's log: entry by entry identical (nothing changed,
//      removed or reordered since you saved it);
//   3. the checkpoint: its Ed25519 signature verifies with the public key, and the entry at its
//      seq in today's log has its hash.
// Exit 0 and "OK" when all hold; 2 for bad usage or an unreadable input.
//
// The canonical form (also in src/server/modules/provider-log/hashing.ts):
//   data:  JSON, object keys sorted at every level, no spaces;
//   hash:  SHA-256 hex of the UTF-8 of
//          JSON.stringify([traffic_provider_id, seq, at, lead_id, kind, canonical(data), prev_hash]);
//   checkpoint message: the lines "leadgate-provider-log-checkpoint-v1", traffic_provider_id, seq,
//          hash, signed_at joined by "\n" (UTF-8), signed with Ed25519, the signature in base64.
// traffic_provider_id is taken from the checkpoint, from an entry that carries it, or --provider <id>.

import { createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';

const GENESIS = '0'.repeat(64);
const CONTEXT = 'leadgate-provider-log-checkpoint-v1';

class Bad extends Error {}

function args(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--') || i + 1 >= argv.length) throw new Bad(`unexpected argument: ${a}`);
    out[a.slice(2)] = argv[++i];
  }
  return out;
}

function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

const hashOf = (providerId, e) =>
  createHash('sha256')
    .update(JSON.stringify([providerId, e.seq, e.at, e.lead_id, e.kind, canonical(e.data), e.prev_hash]), 'utf8')
    .digest('hex');

/** JSON values one after another in `text` (JSON lines, concatenated pages, one array). */
function jsonValues(text) {
  const values = [];
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  try {
    for (const l of lines) values.push(JSON.parse(l));
  } catch {
    values.length = 0;
    values.push(JSON.parse(text));
  }
  return values;
}

/** The entries of a saved copy, in the order written. */
function entriesOf(text) {
  const out = [];
  for (const v of jsonValues(text)) {
    if (Array.isArray(v)) out.push(...v);
    else if (v && Array.isArray(v.data)) out.push(...v.data);
    else out.push(v);
  }
  return out;
}

function readEntries(file) {
  try {
    return entriesOf(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Bad(`cannot read ${file}: ${err.message}`);
  }
}

async function fetchJson(url, key) {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}`, accept: 'application/json' } });
  if (!res.ok) throw new Bad(`${url}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

async function fetchLog(base, key) {
  const out = [];
  let after = 0;
  for (;;) {
    const page = await fetchJson(`${base}/api/portal/log?limit=500&after=${after}`, key);
    out.push(...page.data);
    if (page.next_cursor === null || page.data.length === 0) return out;
    after = page.next_cursor;
  }
}

/** The first problem in one copy's chain, or null. */
function chainProblem(entries, providerId, label) {
  let prev = GENESIS;
  for (const [i, e] of entries.entries()) {
    const at = `${label}: seq ${e.seq ?? `#${i + 1}`}`;
    if (e.seq !== i + 1) return `${at}: expected seq ${i + 1} here (an entry is missing, added or out of order)`;
    if (e.prev_hash !== prev)
      return `${at}: prev_hash ${e.prev_hash} is not the hash of the entry before (${prev}): the chain is broken`;
    const h = hashOf(providerId, e);
    if (e.hash !== h)
      return `${at}: hash ${e.hash} does not match its content (recomputed ${h}): the entry was altered`;
    prev = e.hash;
  }
  return null;
}

function publicKeyOf(text) {
  const t = text.trim();
  const pem = t.startsWith('{') ? JSON.parse(t).public_key_pem : t;
  return createPublicKey(pem);
}

async function main() {
  const o = args(process.argv.slice(2));
  if (!o.saved || (!o.current && !(o.url && o.key)))
    throw new Bad(
      'usage: --saved <file> (--current <file> | --url <base> --key <key>) [--checkpoint <file>] [--public-key <file>]',
    );
  const base = o.url?.replace(/\/+$/, '');
  const saved = readEntries(o.saved);
  const current = o.current ? readEntries(o.current) : await fetchLog(base, o.key);
  let cp = o.checkpoint ? JSON.parse(readFileSync(o.checkpoint, 'utf8')) : null;
  if (!cp && base) cp = await fetchJson(`${base}/api/portal/checkpoints/latest`, o.key);
  let key = null;
  if (cp) {
    if (o['public-key']) key = publicKeyOf(readFileSync(o['public-key'], 'utf8'));
    else if (base) key = publicKeyOf(JSON.stringify(await fetchJson(`${base}/api/portal/public-key`, o.key)));
    else throw new Bad('--checkpoint needs --public-key');
  }
  const providerId =
    o.provider ??
    cp?.traffic_provider_id ??
    [...saved, ...current].find((e) => e.traffic_provider_id)?.traffic_provider_id;
  if (!providerId) throw new Bad('the provider id is not known: pass --provider <id> or --checkpoint');

  const problem =
    chainProblem(saved, providerId, 'saved copy') ??
    chainProblem(current, providerId, "today's log") ??
    prefixProblem(saved, current) ??
    (cp && checkpointProblem(cp, key, current, providerId));
  if (problem) {
    console.log(`FAILED ${problem}`);
    return 1;
  }
  console.log(
    `OK ${saved.length} saved entries are the first ${saved.length} of today's ${current.length}` +
      (cp ? `; checkpoint at seq ${cp.seq} verified` : ''),
  );
  return 0;
}

function prefixProblem(saved, current) {
  for (const [i, s] of saved.entries()) {
    const c = current[i];
    if (!c) return `seq ${s.seq}: in the saved copy but no longer in today's log (${current.length} entries): removed`;
    for (const f of ['seq', 'at', 'lead_id', 'kind', 'prev_hash', 'hash'])
      if (s[f] !== c[f]) return `seq ${s.seq}: ${f} differs from the saved copy (saved ${s[f]}, today ${c[f]})`;
    if (canonical(s.data) !== canonical(c.data))
      return `seq ${s.seq}: data differs from the saved copy (saved ${canonical(s.data)}, today ${canonical(c.data)})`;
  }
  return null;
}

function checkpointProblem(cp, key, current, providerId) {
  const message = Buffer.from(
    [CONTEXT, cp.traffic_provider_id, String(cp.seq), cp.hash, cp.signed_at].join('\n'),
    'utf8',
  );
  if (cp.traffic_provider_id !== providerId)
    return `checkpoint: for provider ${cp.traffic_provider_id}, not ${providerId}`;
  if (!verify(null, message, key, Buffer.from(cp.signature, 'base64')))
    return `checkpoint at seq ${cp.seq}: the signature does not verify with the public key`;
  if (cp.seq === 0) return cp.hash === GENESIS ? null : `checkpoint at seq 0: its hash is not 64 zeros`;
  const e = current[cp.seq - 1];
  if (!e) return `checkpoint at seq ${cp.seq}: today's log has only ${current.length} entries`;
  if (e.hash !== cp.hash) return `seq ${cp.seq}: hash ${e.hash} is not the one the checkpoint signed (${cp.hash})`;
  return null;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Bad ? err.message : err);
    process.exit(2);
  },
);
