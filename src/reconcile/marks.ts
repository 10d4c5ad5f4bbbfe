// The reconcile_mark table: one mark per S/4HANA system and family, in S/4HANA's time (stamp.ts).
import type { Executor } from '../db/transaction.js';
import type { Stamp } from './stamp.js';

export async function readMark(db: Executor, source: string, family: string): Promise<Stamp | undefined> {
  const { rows } = await db.query<{ mark: string }>(
    'select mark from reconcile_mark where source = $1::text and family = $2::text',
    [source, family],
  );
  return rows[0]?.mark;
}

/** Sets the mark, never back: a run that read an older window leaves a newer mark as it is. */
export async function advanceMark(db: Executor, source: string, family: string, mark: Stamp): Promise<void> {
  await db.query(
    `insert into reconcile_mark (source, family, mark) values ($1::text, $2::text, $3::text)
     on conflict (source, family) do update set mark = greatest(reconcile_mark.mark, excluded.mark)`,
    [source, family, mark],
  );
}
