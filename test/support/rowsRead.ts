// How much of a table a statement read, from PostgreSQL's counters for the open transaction: counted in rows,
// never timed.
import type pg from 'pg';

/** Rows of `table` that `work`, run inside `client`'s open transaction, read by scans of any kind. */
export async function rowsRead(
  client: pg.PoolClient,
  table: string,
  work: () => Promise<unknown>,
): Promise<number> {
  const read = async () => {
    const { rows } = await client.query<{ n: string }>(
      `select coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) as "n"
       from pg_stat_xact_user_tables where relname = $1::text`,
      [table],
    );
    return Number(rows[0]?.n ?? 0);
  };
  const before = await read();
  await work();
  return (await read()) - before;
}
