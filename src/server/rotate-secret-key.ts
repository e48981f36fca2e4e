// `npm run secret-key:rotate`: re-seals every stored secret with a new key (secrets/keys.ts
// rotateSecretKey). Run it with the server stopped, with the same environment the server has.
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/database.js';
import { migrate } from './db/migrate.js';
import { newSecretKey } from './secrets/box.js';
import { rotateSecretKey, SecretKeyError } from './secrets/keys.js';

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
  const db = openDatabase(config.database);
  try {
    await migrate(db);
    const done = await rotateSecretKey(config, db);
    if (done.file) {
      console.log(
        `Re-sealed ${done.resealed} secrets with the new key ${done.keyId}; ${done.file} now holds it alone.`,
      );
      console.log('Copy the new key file to wherever you keep it with your backups.');
    } else if (config.secretKeys!.length > 1) {
      console.log(`Re-sealed ${done.resealed} secrets with key ${done.keyId} (the first in LEADGATE_SECRET_KEY).`);
      console.log('Every secret now opens with that key alone: remove the other keys from LEADGATE_SECRET_KEY.');
    } else {
      console.log(
        `Every secret is sealed with key ${done.keyId} (LEADGATE_SECRET_KEY). To rotate it, put a new key first:`,
      );
      console.log(`  LEADGATE_SECRET_KEY=${newSecretKey().key.toString('base64')},<the current key>`);
      console.log(
        'on every server process, restart them (each start re-seals with the first key), then remove the old key.',
      );
    }
  } catch (err) {
    if (!(err instanceof SecretKeyError)) throw err;
    console.error(err.message);
    process.exitCode = 2;
  } finally {
    await db.destroy();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
