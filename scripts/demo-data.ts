// npm run demo-data -- --leads N [--days 90] [--partners 12] [--providers 8] [--seed 1] [--append] [--database-url URL]
//
// Fills the configured database (DATABASE_URL, or the SQLite file under DATA_DIR, exactly like
// the server) with a realistic configuration and N leads spread over the last days. Refuses a
// database that already has leads unless --append is given.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../src/server/config.js';
import { openDatabase } from '../src/server/db/database.js';
import { migrate } from '../src/server/db/migrate.js';
import { DemoDataRefused, generateDemoData } from './demo-data/load.js';
import { progressBar } from './demo-data/progress.js';
import { foldDue } from '../src/server/modules/analytics/attempt-folds.js';
import { foldLeadDays } from '../src/server/modules/analytics/lead-folds.js';

const USAGE = `Usage: npm run demo-data -- --leads N [--days 90] [--partners 12] [--providers 8] [--seed 1] [--append] [--database-url URL]

  --leads N           how many leads to make (required, 1 to 20,000,000)
  --days D            spread them over the last D days (default 90)
  --partners N        partners to make in a database without campaigns (default 12, up to 200)
  --providers N       traffic providers to make likewise (default 8, up to 200)
  --seed S            seed of the random generator (default 1): same seed, same data
  --append            add to a database that already has leads
  --database-url URL  postgres://… or sqlite:path; default: DATABASE_URL, else the SQLite
                      file under DATA_DIR (./data), like the server`;

function fail(message: string, code = 2): never {
  console.error(message);
  process.exit(code);
}

function wholeNumber(name: string, raw: string | undefined, fallback: number | null, min: number, max: number): number {
  if (raw === undefined) {
    if (fallback === null) fail(`--${name} is required.\n\n${USAGE}`);
    return fallback;
  }
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max)
    fail(`--${name} must be a whole number from ${min} to ${max} (got "${raw}").`);
  return Number(raw);
}

async function main() {
  let args;
  try {
    args = parseArgs({
      options: {
        leads: { type: 'string' },
        days: { type: 'string' },
        partners: { type: 'string' },
        providers: { type: 'string' },
        seed: { type: 'string' },
        append: { type: 'boolean', default: false },
        'database-url': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }).values;
  } catch (err) {
    fail(`${(err as Error).message}\n\n${USAGE}`);
  }
  if (args.help) {
    console.log(USAGE);
    return;
  }
  const leads = wholeNumber('leads', args.leads, null, 1, 20_000_000);
  const days = wholeNumber('days', args.days, 90, 1, 3650);
  const seed = wholeNumber('seed', args.seed, 1, 0, 2 ** 31);
  const size = {
    partners: wholeNumber('partners', args.partners, 12, 1, 200),
    providers: wholeNumber('providers', args.providers, 8, 1, 200),
  };

  let config;
  try {
    config = loadConfig({ ...process.env, ...(args['database-url'] ? { DATABASE_URL: args['database-url'] } : {}) });
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message);
    throw err;
  }
  const where = config.database.engine === 'sqlite' ? config.database.file : 'PostgreSQL';
  const db = openDatabase(config.database);
  try {
    await migrate(db);
    const bar = progressBar('leads');
    const started = Date.now();
    let build: ReturnType<typeof progressBar> | undefined;
    const result = await generateDemoData(db, {
      leads,
      days,
      seed,
      size,
      append: args.append,
      onProgress: bar.update,
      onBuild: (done, total) => {
        if (!build) {
          bar.done();
          build = progressBar('indexes and rollups');
        }
        build.update(done, total);
      },
    });
    (build ?? bar).done();
    // The reports' folds (partner performance's closed hours, the leads report's ended days),
    // which the server's fold job would otherwise make in its first minutes (modules/analytics/).
    const folding = progressBar('partner performance hours and days');
    await foldDue(db, { onProgress: folding.update });
    folding.done();
    const dayBar = progressBar('leads report days');
    await foldLeadDays(db, { onProgress: dayBar.update });
    dayBar.done();
    const seconds = (Date.now() - started) / 1000;
    console.error(
      `Done in ${seconds.toFixed(1)} s (${where}): ${result.leads.toLocaleString('en-US')} leads and ` +
        `${result.attempts.toLocaleString('en-US')} delivery attempts from ${result.from} to ${result.to}; ` +
        `${result.partners} partners, ${result.campaigns} campaigns` +
        (result.configurationCreated ? ' (configuration created).' : ' (existing configuration reused).'),
    );
  } catch (err) {
    if (err instanceof DemoDataRefused) {
      console.error(`${err.message} (${where})`);
      process.exitCode = 1;
    } else throw err;
  } finally {
    await db.destroy();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
