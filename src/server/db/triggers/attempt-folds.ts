import type { Engine } from '../database.js';
import { defineTrigger } from './define.js';

// Partner performance reads folded hours and days of delivery attempts and tracked links
// (attempt_stats_* and attempt_reasons_*, written by modules/analytics/attempt-folds.ts; a bucket
// counts as folded while its row in attempt_folds exists). These triggers keep that exact: a
// change to an attempt or a link in a folded hour takes the hour and its UTC day out of
// attempt_folds, and their rows out of the rollups, in the writer's own transaction; the report
// then reads that hour from the attempts themselves until the job folds it again.
// From 20261209T000000Z_attempt_rollups.
//
// Live traffic pays one probe of attempt_folds when an attempt finishes (in-flight attempts are
// not counted, so their insert fires nothing): the hour being written is never folded.
//
// Why the hour's fold row goes before the day's, in a statement of its own: on PostgreSQL the
// job folding a day holds its hours' fold rows FOR SHARE while it inserts the day's row; the
// hour's delete waits for that commit, and the day's delete, a new statement, then sees the
// day's new row (one statement would have read both under the snapshot taken before the wait).

const HOURLY = ['attempt_stats_hourly', 'attempt_reasons_hourly'];
const DAILY = ['attempt_stats_daily', 'attempt_reasons_daily'];

/** Statements that unfold the hour and day of timestamp expression `at`. */
function unfold(at: string): string[] {
  const hour = `substr(${at}, 1, 13)`;
  const day = `substr(${at}, 1, 10)`;
  return [
    `delete from attempt_folds where bucket = ${hour}`,
    `delete from attempt_folds where bucket = ${day}`,
    ...HOURLY.map((t) => `delete from ${t} where bucket = ${hour}`),
    ...DAILY.map((t) => `delete from ${t} where bucket = ${day}`),
  ];
}

const folded = (at: string) =>
  `exists (select 1 from attempt_folds where bucket in (substr(${at}, 1, 13), substr(${at}, 1, 10)))`;

/** What else unfolds with the rows' own buckets: a condition that some other bucket is folded, and its statements. */
interface Also {
  folded: string;
  body: string[];
}

/**
 * After `event` on `table`: when `when` holds and one of the rows' buckets (timestamp
 * expressions `at`) is folded, unfold them. SQLite tests the buckets in WHEN; PostgreSQL allows no
 * subquery there, so its function returns first.
 */
function unfolding(
  name: string,
  table: string,
  event: string,
  when: (e: Engine) => string | null,
  at: string[],
  also?: Also,
) {
  const any = [...at.map(folded), ...(also ? [also.folded] : [])].join(' or ');
  const body = [...at.flatMap(unfold), ...(also?.body ?? [])];
  return defineTrigger(name, table, event, (engine: Engine) => {
    const w = when(engine);
    return engine === 'postgres'
      ? { when: w, body: [`if not (${any}) then return null; end if`, ...body] }
      : { when: w ? `(${w}) and (${any})` : any, body };
  });
}

/** The attempt columns partner performance reads. */
const ATTEMPT_COLUMNS = ['lead_id', 'partner_id', 'requested_at', 'outcome', 'duration_ms', 'reason', 'injection_id'];
const LINK_COLUMNS = ['lead_id', 'partner_id', 'created_at'];

const changed = (engine: Engine, columns: string[]) =>
  engine === 'postgres'
    ? `(${columns.map((c) => `old.${c}`).join(', ')}) is distinct from (${columns.map((c) => `new.${c}`).join(', ')})`
    : columns.map((c) => `old.${c} is not new.${c}`).join(' or ');

export const attemptFoldInsert = unfolding(
  'attempt_fold_insert',
  'lead_attempts',
  'insert',
  () => `new.outcome <> 'in_flight'`,
  ['new.requested_at'],
);

// A tracked link's origin (then_by=origin) is read from its lead's accepted attempt: a change of
// an attempt unfolds the buckets of its lead's links too (a finishing call finds none yet).
const linkBuckets = (len: 13 | 10) =>
  `(select substr(created_at, 1, ${len}) from autologin_links where lead_id in (old.lead_id, new.lead_id))`;

export const attemptFoldUpdate = unfolding(
  'attempt_fold_update',
  'lead_attempts',
  `update of ${ATTEMPT_COLUMNS.join(', ')}`,
  (engine) => changed(engine, ATTEMPT_COLUMNS),
  ['old.requested_at', 'new.requested_at'],
  {
    // Driven from the lead's links (autologin_links_lead), each probing attempt_folds by its key.
    folded: `exists (select 1 from autologin_links k join attempt_folds f on f.bucket in (substr(k.created_at, 1, 13), substr(k.created_at, 1, 10)) where k.lead_id in (old.lead_id, new.lead_id))`,
    body: [
      `delete from attempt_folds where bucket in ${linkBuckets(13)}`,
      `delete from attempt_folds where bucket in ${linkBuckets(10)}`,
    ],
  },
);

export const attemptFoldDelete = unfolding(
  'attempt_fold_delete',
  'lead_attempts',
  'delete',
  () => `old.outcome <> 'in_flight'`,
  ['old.requested_at'],
);

export const linkFoldInsert = unfolding('link_fold_insert', 'autologin_links', 'insert', () => null, [
  'new.created_at',
]);

export const linkFoldUpdate = unfolding(
  'link_fold_update',
  'autologin_links',
  `update of ${[...LINK_COLUMNS, 'opens'].join(', ')}`,
  (engine) => `(${changed(engine, LINK_COLUMNS)}) or (old.opens > 0) <> (new.opens > 0)`,
  ['old.created_at', 'new.created_at'],
);

export const linkFoldDelete = unfolding('link_fold_delete', 'autologin_links', 'delete', () => null, [
  'old.created_at',
]);

/** A lead moved to another provider (nothing does this today) unfolds the buckets of its attempts and links. */
export const leadFoldProvider = defineTrigger('lead_fold_provider', 'leads', 'update of traffic_provider_id', () => ({
  when: 'old.traffic_provider_id <> new.traffic_provider_id',
  body: [13, 10].map(
    (len) =>
      `delete from attempt_folds where bucket in (select substr(requested_at, 1, ${len}) from lead_attempts where lead_id = new.id union select substr(created_at, 1, ${len}) from autologin_links where lead_id = new.id)`,
  ),
}));

export const ATTEMPT_FOLD_TRIGGERS = [
  attemptFoldInsert,
  attemptFoldUpdate,
  attemptFoldDelete,
  linkFoldInsert,
  linkFoldUpdate,
  linkFoldDelete,
  leadFoldProvider,
];
