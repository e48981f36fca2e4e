import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/database.js';
import { migrate } from './db/migrate.js';
import { SecretKeyError } from './secrets/keys.js';
import { createOwner, ensureAdminRole } from './modules/operators/service.js';

async function main() {
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
