import { leadInScope, type DataScope } from '../../db/scope.js';
import { isPostgres, type DB } from '../../db/database.js';
import { CONVERSION_LEAD_COLUMNS } from './apply.js';

/** The lead as a conversion reads it, with its status; locked until commit on PostgreSQL. */
/** The lead, locked, or undefined when there is none or it is out of the caller's scope. */
export async function findLeadForConversion(tx: DB, id: string, scope: DataScope) {
  let q = tx
    .selectFrom('leads')
    .select([...CONVERSION_LEAD_COLUMNS, 'status'])
    .where('id', '=', id);
  const inScope = leadInScope(scope);
  if (inScope) q = q.where(inScope);
  if (isPostgres(tx)) q = q.forUpdate();
  return q.executeTakeFirst();
}
