import { isPostgres, type DB } from '../../db/database.js';
import { CONVERSION_LEAD_COLUMNS } from './apply.js';

/** The lead as a conversion reads it, with its status; locked until commit on PostgreSQL. */
export async function findLeadForConversion(tx: DB, id: string) {
  let q = tx
    .selectFrom('leads')
    .select([...CONVERSION_LEAD_COLUMNS, 'status'])
    .where('id', '=', id);
  if (isPostgres(tx)) q = q.forUpdate();
  return q.executeTakeFirst();
}
