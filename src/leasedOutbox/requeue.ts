// The operator's retry, the same for both outboxes: a parked or failing row back in line, due now, with a fresh
// attempt budget, remembering the state and error it had. Its identity towards the receiver (the Message-ID, the
// Idempotency-Key) stays: it is the same message. What a retry means for a row in flight depends on how the table
// leases, which its module says.
import type { Executor } from '../db/transaction.js';

const KEY_TYPES = { id: 'bigint', family: 'text', key: 'text' } as const;

export interface RequeueTable<Done extends string> {
  table: 'mail_outbox' | 'portal_push';
  /** The columns of the row's key: a mail's id, a push's family and key. */
  key: ReadonlyArray<keyof typeof KEY_TYPES>;
  /** The state of rows that are finished with: a retry leaves them alone. */
  done: Done;
  /** The column of the row's identity towards the receiver. */
  identity: 'message_id' | 'push_id';
}

export type Requeued<Done extends string> =
  | { kind: 'retried'; identity: string }
  | { kind: 'not_found' }
  | { kind: Done };

export async function requeue<Done extends string>(
  db: Executor,
  of: RequeueTable<Done>,
  key: string[],
): Promise<Requeued<Done>> {
  const where = of.key.map((column, n) => `${column} = $${n + 1}::${KEY_TYPES[column]}`).join(' and ');
  const { rows } = await db.query<{ identity: string }>(
    `update ${of.table} set state = 'pending', attempts = 0, next_attempt_at = now(), last_error = null,
       retried_at = now(), retried_state = state, retried_error = last_error
     where ${where} and state <> '${of.done}'
     returning ${of.identity}::text as "identity"`,
    key,
  );
  if (rows[0] !== undefined) return { kind: 'retried', identity: rows[0].identity };
  const found = await db.query(`select from ${of.table} where ${where}`, key);
  return found.rowCount === 0 ? { kind: 'not_found' } : { kind: of.done };
}
