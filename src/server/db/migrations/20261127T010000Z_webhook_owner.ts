import { sql, type Kysely } from 'kysely';

// A webhook sends with its owner's rights (issue 24, finding 4): each event type needs a
// permission to read (events/types.ts), and an operator who may not read lead events must not
// receive them through a webhook. webhooks.owner_id is the operator who created the webhook or
// last changed where or what it sends; the dispatcher sends an event only while that operator is
// active and its role may read the event's type, read at send time on every instance.
//
// A deleted owner leaves the webhook without one (nothing is sent until someone takes it over by
// changing it). Webhooks made before this release had no owner recorded: they go on as before,
// owned by the oldest active admin (the built-in role holds every permission); with no admin
// left, they have none.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table webhooks add column owner_id text references operators (id) on delete set null`.execute(db);
  await sql`
    update webhooks set owner_id = (
      select o.id from operators o join roles r on r.id = o.role_id
      where r.builtin = 1 and o.status = 'active' order by o.created_at, o.id limit 1)`.execute(db);
}
