import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import type { Purpose } from './box.js';

// Where sealed secrets live (two-factor seeds too), one place for all of them: start-up checks that their keys are
// loaded and seals values written before sealing existed; key rotation re-seals them all. A new
// kind of stored secret is added here and sealed where it is written (box.ts).

type Rewrite = (value: string, purpose: Purpose) => string;

/** Each row's column rewritten value by value; a row whose column changed is updated. Returns how many values were seen. */
export async function rewriteSecrets(db: Kysely<Database>, rewrite: Rewrite): Promise<number> {
  let seen = 0;
  const count: Rewrite = (v, p) => {
    seen++;
    return rewrite(v, p);
  };
  const mapHeaders = (json: string, field: string, purpose: Purpose) => {
    const parsed = JSON.parse(json) as Record<string, unknown>;
    const headers = parsed[field];
    if (!headers || typeof headers !== 'object') return json;
    const next = Object.fromEntries(
      Object.entries(headers as Record<string, string>).map(([k, v]) => [k, count(v, purpose)]),
    );
    return JSON.stringify({ ...parsed, [field]: next });
  };

  for (const p of await db.selectFrom('partners').select(['id', 'integration']).execute()) {
    const next = mapHeaders(p.integration, 'headers', 'partner-header');
    if (next !== p.integration)
      await db.updateTable('partners').set({ integration: next }).where('id', '=', p.id).execute();
  }
  for (const s of await db.selectFrom('partner_status_pulls').select(['partner_id', 'config']).execute()) {
    const next = mapHeaders(s.config, 'request_headers', 'status-pull-header');
    if (next !== s.config)
      await db
        .updateTable('partner_status_pulls')
        .set({ config: next })
        .where('partner_id', '=', s.partner_id)
        .execute();
  }
  for (const w of await db.selectFrom('webhooks').select(['id', 'secret']).execute()) {
    const next = count(w.secret, 'webhook-secret');
    if (next !== w.secret) await db.updateTable('webhooks').set({ secret: next }).where('id', '=', w.id).execute();
  }
  for (const table of ['operators', 'provider_users'] as const) {
    const rows = await db
      .selectFrom(table)
      .select(['id', 'totp_secret', 'totp_pending_secret'])
      .where((eb) => eb.or([eb('totp_secret', 'is not', null), eb('totp_pending_secret', 'is not', null)]))
      .execute();
    for (const r of rows) {
      const secret = r.totp_secret === null ? null : count(r.totp_secret, 'totp-seed');
      const pending = r.totp_pending_secret === null ? null : count(r.totp_pending_secret, 'totp-seed');
      if (secret !== r.totp_secret || pending !== r.totp_pending_secret)
        await db
          .updateTable(table)
          .set({ totp_secret: secret, totp_pending_secret: pending })
          .where('id', '=', r.id)
          .execute();
    }
  }
  const settings: [string, Purpose, (v: unknown) => string, (v: unknown, s: string) => unknown][] = [
    [
      'provider_log_signing_key',
      'provider-log-key',
      (v) => (v as { private_pem: string }).private_pem,
      (v, s) => ({ ...(v as object), private_pem: s }),
    ],
    ['autologin_link_key', 'autologin-link-key', (v) => v as string, (_v, s) => s],
    ['blocklist_match_key', 'blocklist-match-key', (v) => v as string, (_v, s) => s],
  ];
  for (const [key, purpose, get, put] of settings) {
    const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
    if (!row) continue;
    const value = JSON.parse(row.value) as unknown;
    const before = get(value);
    const after = count(before, purpose);
    if (after !== before)
      await db
        .updateTable('settings')
        .set({ value: JSON.stringify(put(value, after)) })
        .where('key', '=', key)
        .execute();
  }
  return seen;
}
