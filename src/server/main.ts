import v8 from 'node:v8';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/database.js';
import { migrate } from './db/migrate.js';
import { SecretKeyError } from './secrets/keys.js';
import { createOwner, ensureAdminRole } from './modules/operators/service.js';

/**
 * V8 lets the old generation grow to up to 4× what survived the last full collection before it
 * collects again: with about 60 MB live, an import beside intake took the server from 230 MB to
 * 400 MB of garbage waiting (bench/RESULTS.md). Growing by 30 % instead keeps it near 270 MB for
 * a few more collections (each mostly concurrent). `node --heap-growing-percent=N` overrides it.
 */
const HEAP_GROWING_PERCENT = 30;

async function main() {
  if (!process.execArgv.some((a) => /^--heap[-_]growing[-_]percent/.test(a)))
    v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }

  const db = openDatabase(config.database, { backgroundCheckpoints: true });
  const where = config.database.engine === 'sqlite' ? config.database.file : 'PostgreSQL';
  try {
    await migrate(db);
  } catch (err) {
    console.error(`Could not prepare the database (${where}): ${(err as Error).message}`);
    await db.destroy().catch(() => {});
    process.exit(1);
  }
  await ensureAdminRole(db);
  if (config.admin) {
    const created = await createOwner(db, {
      email: config.admin.email,
      name: 'Owner',
      password: config.admin.password,
    });
    if (created) console.log(`Created the owner ${config.admin.email} (role admin).`);
  }

  let app;
  try {
    app = await buildApp(config, db);
  } catch (err) {
    if (!(err instanceof SecretKeyError)) throw err;
    console.error(err.message);
    await db.destroy().catch(() => {});
    process.exit(2);
  }
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      app.log.error('in-flight requests did not finish within 25 s; exiting');
      process.exit(1);
    }, 25_000);
    force.unref();
    await app.close(); // stops accepting, lets in-flight requests finish
    await db.destroy();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    console.error(
      e.code === 'EADDRINUSE'
        ? `Port ${config.port} on ${config.host} is already in use; set PORT to another one.`
        : `Could not listen on ${config.host}:${config.port}: ${e.message}`,
    );
    await db.destroy();
    process.exit(1);
  }
  app.log.info(
    `Leadgate is up on http://${config.host}:${app.server.address() && typeof app.server.address() === 'object' ? (app.server.address() as { port: number }).port : config.port} (${config.database.engine}: ${where}); API docs at /api/docs`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
