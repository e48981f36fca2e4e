// The vendor side of licensing (never shipped to customers' servers as a need):
//   npm run licence -- keygen --out DIR
//   npm run licence -- issue --key private.pem --holder "Acme" --plan pro --expires 2027-12-31
//                            [--installation ID] [--limit operators=10 ...]
// Bad arguments exit with status 2 and say what is wrong.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  LIMIT_NAME,
  MalformedLicence,
  parsePrivateKey,
  signLicence,
  type LicencePayload,
} from '../src/server/modules/licence/format.js';

const USAGE = `Usage:
  npm run licence -- keygen --out DIR
      Makes a vendor Ed25519 key pair: DIR/leadgate-vendor-private-key.pem (keep it secret,
      never in the repository) and DIR/leadgate-vendor-public-key.pem (build it into the
      release as src/server/licence-key.ts, or set LICENCE_PUBLIC_KEY).

  npm run licence -- issue --key PRIVATE.pem --holder NAME --plan PLAN --expires DATE
                           [--installation ID] [--limit NAME=N ...] [--id LICENCE_ID]
      Prints a signed licence key. DATE is YYYY-MM-DD (valid through the end of that day, UTC)
      or an ISO timestamp. --installation binds the key to one installation id (shown in the
      Licence panel). --limit may be repeated, e.g. --limit operators=10 --limit leads_per_month=50000.`;

function fail(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

function keygen(argv: string[]) {
  const { out } = parseArgs({ args: argv, options: { out: { type: 'string' } }, strict: true }).values;
  if (!out) fail('keygen needs --out DIR.');
  const dir = path.resolve(out);
  const privatePath = path.join(dir, 'leadgate-vendor-private-key.pem');
  const publicPath = path.join(dir, 'leadgate-vendor-public-key.pem');
  for (const p of [privatePath, publicPath])
    if (existsSync(p)) fail(`${p} already exists; refusing to overwrite a vendor key.`);
  mkdirSync(dir, { recursive: true });
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  writeFileSync(privatePath, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  writeFileSync(publicPath, publicKey.export({ type: 'spki', format: 'pem' }), { flag: 'wx' });
  console.log(`Private key: ${privatePath} (keep it secret)`);
  console.log(`Public key:  ${publicPath}`);
  console.log(
    `Public key as base64 SPKI (for LICENCE_PUBLIC_KEY): ${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`,
  );
}

function expiry(raw: string): string {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(raw);
  const ms = Date.parse(day ? `${raw}T23:59:59Z` : raw);
  if (Number.isNaN(ms) || (!day && !/^\d{4}-\d{2}-\d{2}T/.test(raw)))
    fail(`--expires must be YYYY-MM-DD or an ISO timestamp (got "${raw}").`);
  // A date that does not exist (2027-02-30) parses as another day in some engines: refuse it.
  if (day && new Date(ms).toISOString().slice(0, 10) !== raw) fail(`--expires ${raw} is not a real date.`);
  if (ms <= Date.now()) fail(`--expires ${raw} is in the past.`);
  return new Date(ms).toISOString();
}

function limits(entries: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const entry of entries) {
    const m = /^([^=]+)=(\d{1,15})$/.exec(entry);
    if (!m || !LIMIT_NAME.test(m[1]))
      fail(`--limit must be NAME=N with a lower-case name and a whole number (got "${entry}").`);
    if (m[1] in out) fail(`--limit ${m[1]} is given twice.`);
    out[m[1]] = Number(m[2]);
  }
  return out;
}

function issue(argv: string[]) {
  const a = parseArgs({
    args: argv,
    options: {
      key: { type: 'string' },
      holder: { type: 'string' },
      plan: { type: 'string' },
      expires: { type: 'string' },
      installation: { type: 'string' },
      limit: { type: 'string', multiple: true, default: [] },
      id: { type: 'string' },
    },
    strict: true,
  }).values;
  for (const name of ['key', 'holder', 'plan', 'expires'] as const)
    if (!a[name]?.trim()) fail(`issue needs --${name}.`);
  let pem: string;
  try {
    pem = readFileSync(a.key!, 'utf8');
  } catch (err) {
    fail(`--key ${a.key}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`);
  }
  let privateKey;
  try {
    privateKey = parsePrivateKey(pem);
  } catch (err) {
    fail(`--key ${a.key} is not an Ed25519 private key in PEM (${(err as Error).message}).`);
  }
  if (
    a.installation !== undefined &&
    !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(a.installation)
  ) {
    fail(`--installation must be an installation id (a UUID, as shown in the Licence panel); got "${a.installation}".`);
  }
  const payload: LicencePayload = {
    v: 1,
    licence_id: a.id?.trim() || randomUUID(),
    holder: a.holder!.trim(),
    plan: a.plan!.trim(),
    limits: limits(a.limit!),
    issued_at: new Date().toISOString(),
    expires_at: expiry(a.expires!),
    ...(a.installation ? { installation_id: a.installation.toLowerCase() } : {}),
  };
  try {
    console.log(signLicence(payload, privateKey));
  } catch (err) {
    if (err instanceof MalformedLicence) fail(err.message);
    throw err;
  }
}

const [command, ...rest] = process.argv.slice(2);
try {
  if (command === 'keygen') keygen(rest);
  else if (command === 'issue') issue(rest);
  else if (command === 'help' || command === '--help' || command === '-h') console.log(USAGE);
  else fail(command ? `Unknown command "${command}".` : 'Say keygen or issue.');
} catch (err) {
  // parseArgs: an unknown option or a missing value.
  if ((err as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) fail((err as Error).message);
  throw err;
}
