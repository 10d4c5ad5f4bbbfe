/**
 * One batch of a retention delete, for the module that owns `table`: up to $2 of its oldest rows whose `age`
 * column is before $1 (and that match `only`, an SQL condition ending in `and`).
 *
 * The statement takes the oldest expired rows through the age index and locks them, skipping rows another
 * transaction holds (a redelivery updating its attempt count, say): those wait for the next pass. The delete
 * finds the locked rows by ctid, which cannot change while the lock is held.
 */
export function deleteOldest(table: string, age: string, only = ''): string {
  return `delete from ${table} where ctid = any(array(
            select ctid from ${table} where ${only}${age} < $1::timestamptz
            order by ${age} limit $2::int for update skip locked))`;
}
