// What writing the outbox costs each lead, in-process, without HTTP: N leads inserted and then
// marked delivered (the two writes intake makes per lead), one statement each, with no
// subscription, then with two webhooks subscribed to every lead event (so each lead writes two
// events and four deliveries through the triggers). Alternates the two, several rounds, on the
// engines given.
//   npx tsx bench/outbox-writes.ts [--engines sqlite,postgres] [--leads 5000] [--rounds 3]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { openDatabase, type DB } from '../src/server/db/database.js';
import { newId, nowIso } from '../src/server/db/ids.js';
import { migrate } from '../src/server/db/migrate.js';

const { values: args } = parseArgs({
  options: {
    engines: { type: 'string', default: 'sqlite,postgres' },
    leads: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '3' },
    'postgres-url': {
      type: 'string',
      default: process.env.BENCH_POSTGRES_URL || 'postgres://postgres@127.0.0.1:55432/postgres',
    },
  },
});
const N = Number(args.leads);

async function setUp(engine: string): Promise<{ db: DB; done: () => Promise<void> }> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'outbox-bench-'));
    const db = openDatabase({ engine: 'sqlite', file: path.join(dir, 'leadgate.db') } as never);
    await migrate(db);
    for (const q of (process.env.OUTBOX_BENCH_SQL ?? '').split(';').filter((x) => x.trim()))
      await sql.raw(q).execute(db);
    return {
      db,
      done: async () => {
        await db.destroy();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = `outbox_bench_${process.pid}`;
  const admin = openDatabase({ engine: 'postgres', url: args['postgres-url']! } as never);
  await sql.raw(`create schema ${schema}`).execute(admin);
  await admin.destroy();
  const db = openDatabase({ engine: 'postgres', url: args['postgres-url']!, schema } as never);
  await migrate(db);
  return {
    db,
    done: async () => {
      await db.schema.dropSchema(schema).cascade().execute();
      await db.destroy();
    },
  };
}

async function writeLeads(db: DB, providerId: string): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < N; i++) {
    const id = newId();
    const now = nowIso();
    await db
      .insertInto('leads')
      .values({
        id,
        created_at: now,
        first_name: 'A',
        last_name: 'B',
        email: `${id}@example.com`,
        phone: '+4915100000000',
        country: 'DE',
        ip: '203.0.113.1',
        language: null,
        funnel: null,
        sub_id1: 'x',
        sub_id2: null,
        sub_id3: null,
        sub_id4: null,
        sub_id5: null,
        traffic_provider_id: providerId,
        campaign_id: null,
        flow_id: null,
        partner_id: null,
        status: 'pending',
        reason: null,
        partner_lead_id: null,
        sale_status: null,
        autologin_url: null,
        delivered_at: null,
        ftd_at: null,
        status_updated_at: now,
        cost_cents: 0,
        revenue_cents: 0,
        lease_until: null,
      })
      .execute();
    await db
      .updateTable('leads')
      .set({ status: 'delivered', delivered_at: now, status_updated_at: now })
      .where('id', '=', id)
      .execute();
  }
  return (performance.now() - started) / N;
}

for (const engine of args.engines!.split(',')) {
  const { db, done } = await setUp(engine);
  try {
    const providerId = newId();
    const now = nowIso();
    await db
      .insertInto('traffic_providers')
      .values({
        id: providerId,
        name: 'P',
        status: 'active',
        token_id: newId(),
        token_hash: 'x',
        allowed_ips: '[]',
        duplicate_policy: '{}',
        created_at: now,
        updated_at: now,
        archived_at: null,
      })
      .execute();
    const types = [
      'lead.received',
      'lead.delivered',
      'lead.rejected',
      'lead.failed',
      'lead.ftd',
      'lead.sale_status_changed',
    ];
    const subscribe = async (on: boolean) => {
      await db.deleteFrom('event_subscriptions').execute();
      if (on)
        for (const hook of ['A', 'B'])
          await db
            .insertInto('event_subscriptions')
            .values(
              types.map((t) => ({
                event_type: t,
                destination_kind: 'webhook' as const,
                destination_id: hook,
                traffic_provider_id: null,
                campaign_id: null,
              })),
            )
            .execute();
    };
    await subscribe(false);
    await writeLeads(db, providerId); // warm-up
    for (let r = 0; r < Number(args.rounds); r++) {
      await subscribe(false);
      const off = await writeLeads(db, providerId);
      await subscribe(true);
      const on = await writeLeads(db, providerId);
      console.log(
        `| ${engine} | ${r + 1} | ${(off * 1000).toFixed(0)} µs | ${(on * 1000).toFixed(0)} µs | +${(((on - off) / off) * 100).toFixed(0)} % |`,
      );
    }
  } finally {
    await done();
  }
}
