// The outbox claim's SQL against interleavings forced with transactions and row locks, not timing: which email
// of an order may be claimed while its older ones are leased, waiting for a retry, parked, or being claimed by
// another instance at this very moment; and whose lease a renewal extends.
import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CLAIM_DUE,
  type ClaimedMail,
  claimDue,
  claimDueInTransaction,
  markSent,
  park,
  renewLeases,
  scheduleRetry,
} from '../../src/notifications/mailOutbox.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { rowsRead } from '../support/rowsRead.js';

const LEASE = 15;
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());
beforeEach(async () => {
  await db.pool.query('truncate mail_outbox');
});

/** Queues one email per entry, in this order (the outbox order), and returns their ids. */
async function queue(...salesOrders: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const salesOrder of salesOrders) {
    const { rows } = await db.pool.query<{ id: string }>(
      `insert into mail_outbox (family, key, content, recipients, message_id)
       values ('salesOrder', $1::text, '{"portalStatus": "Open"}', array['fleet-manager@fleet.example'], '<' || gen_random_uuid() || '@fleet.example>')
       returning id::text as "id"`,
      [salesOrder],
    );
    ids.push((rows[0] as { id: string }).id);
  }
  return ids;
}

const ids = (mails: Array<{ id: string }>) => mails.map((mail) => mail.id).sort();

/** Runs `work` inside an open transaction on its own connection; rolled back when the returned end() is called. */
async function inOpenTransaction<T>(work: (client: pg.PoolClient) => Promise<T>) {
  const client = await db.pool.connect();
  await client.query('begin');
  const result = await work(client);
  return {
    result,
    async end() {
      await client.query('rollback');
      client.release();
    },
  };
}

describe('claiming due mail in outbox order per order', () => {
  it('claims only the oldest pending email of each order', async () => {
    const [a1, , b1] = await queue('A', 'A', 'B');
    expect(ids(await claimDue(db.pool, 10, LEASE))).toEqual(
      ids([{ id: a1 as string }, { id: b1 as string }]),
    );
  });

  it('skips an order while its older email is leased elsewhere, and takes the next one once it is sent', async () => {
    const [a1, a2] = await queue('A', 'A');
    expect(ids(await claimDue(db.pool, 10, LEASE))).toEqual([a1]);
    expect(await claimDue(db.pool, 10, LEASE)).toEqual([]);
    await markSent(db.pool, [a1 as string]);
    expect(ids(await claimDue(db.pool, 10, LEASE))).toEqual([a2]);
  });

  it('skips an order whose older email another instance is claiming in a transaction not yet committed', async () => {
    const [a1, , b1] = await queue('A', 'A', 'B');
    const other = await inOpenTransaction((client) => claimDueInTransaction(client, 1, LEASE));
    try {
      expect(ids(other.result)).toEqual([a1]);
      // a1 is locked by the other claim and still pending in this snapshot: neither it nor a2 may go.
      expect(ids(await claimDue(db.pool, 10, LEASE))).toEqual([b1]);
    } finally {
      await other.end();
    }
  });

  it("holds an order's later emails back while its older email waits for a retry", async () => {
    const [a1] = await queue('A', 'A');
    await claimDue(db.pool, 10, LEASE);
    await scheduleRetry(db.pool, a1 as string, 60, 'SMTP 451');
    expect(await claimDue(db.pool, 10, LEASE)).toEqual([]);
    await scheduleRetry(db.pool, a1 as string, 0, 'SMTP 451');
    expect(ids(await claimDue(db.pool, 10, LEASE))).toEqual([a1]);
  });

  it("lets a parked email's later emails go", async () => {
    const [a1, a2] = await queue('A', 'A');
    await claimDue(db.pool, 10, LEASE);
    await park(db.pool, a1 as string, 'SMTP 550');
    expect(ids(await claimDue(db.pool, 10, LEASE))).toEqual([a2]);
  });

  it('claims no more than asked for', async () => {
    await queue('A', 'B', 'C', 'D');
    expect(await claimDue(db.pool, 2, LEASE)).toHaveLength(2);
  });
});

/** `count` pending emails numbered from `first`, each of the order that `order` (SQL) makes of its number `n`. */
function queueBacklog(db: pg.Pool | pg.PoolClient, first: number, count: number, order = `'SO' || n`) {
  return db.query(
    `insert into mail_outbox (family, key, content, recipients, message_id)
     select 'salesOrder', ${order}, '{"portalStatus": "Open"}', array['fleet-manager@fleet.example'],
       '<' || gen_random_uuid() || '@fleet.example>'
     from generate_series($1::int, $1::int + $2::int - 1) n`,
    [first, count],
  );
}

/**
 * Runs `work` on one connection of a database of its own, whose statistics no other test touches; the database
 * is dropped after it.
 */
async function onOwnDatabase(work: (client: pg.PoolClient, pool: pg.Pool) => Promise<void>): Promise<void> {
  const own = await createTestDatabase();
  const client = await own.pool.connect();
  try {
    await work(client, own.pool);
  } finally {
    client.release();
    await own.drop();
  }
}

/** Runs `work` in a transaction rolled back after it: what it wrote is gone, the connection's kept plans stay. */
async function rolledBack(client: pg.PoolClient, work: () => Promise<void>): Promise<void> {
  await client.query('begin');
  try {
    await work();
  } finally {
    await client.query('rollback');
  }
}

describe('claiming from a large backlog on a table without statistics', () => {
  interface PlanNode {
    'Actual Rows': number;
    'Actual Loops': number;
    'Rows Removed by Filter'?: number;
    'Rows Removed by Join Filter'?: number;
    Plans?: PlanNode[];
  }

  /** Rows every node of the plan produced or threw away, over all its loops. */
  function rowsTouched(node: PlanNode): number {
    const removed = (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Join Filter'] ?? 0);
    const own = (node['Actual Rows'] + removed) * node['Actual Loops'];
    return own + (node.Plans ?? []).reduce((sum, child) => sum + rowsTouched(child), 0);
  }

  it('looks at each pending email a few times per claim, not once per other pending email', async () => {
    // A backlog as an SMTP outage leaves it, in a database as new as a first deployment's, never analyzed: one
    // email for each of 4,000 orders, where an anti join can be planned as a loop over every pending row per
    // candidate. Counted in rows, not timed.
    await onOwnDatabase(async (client, pool) => {
      const pending = 4000;
      await queueBacklog(client, 1, pending);
      await rolledBack(client, async () => {
        const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
          `explain (analyze, format json) ${CLAIM_DUE}`,
          [8, LEASE, null],
        );
        const plan = rows[0]?.['QUERY PLAN'][0]?.Plan as PlanNode;
        expect(plan['Actual Rows']).toBe(8);
        expect(rowsTouched(plan)).toBeLessThan(10 * pending);
      });
      // And it still claims what it should: the first eight orders' emails.
      const { rows: oldest } = await pool.query<{ id: string }>(
        'select min(id)::text as "id" from mail_outbox group by key order by min(id) limit 8',
      );
      expect(ids(await claimDue(pool, 8, LEASE))).toEqual(ids(oldest));
    });
  });
});

describe('claiming from a backlog that grew after the last analyze', () => {
  it('reads about as many rows as it claims, not the whole backlog, on a connection that claimed while it was quiet', async () => {
    // The outbox's statistics are a quiet day's (autovacuum analyzed it with a few emails pending); then an
    // outage's backlog grows to thousands, faster than autovacuum analyzes, on a connection that has claimed
    // before: a plan kept from the quiet outbox would read the whole backlog at every claim.
    await onOwnDatabase(async (client) => {
      const pending = 4000;
      await queueBacklog(client, 1, 60);
      await client.query(
        `update mail_outbox set state = 'sent', sent_at = now()
         where id in (select id from mail_outbox order by id limit 40)`,
      );
      await client.query('analyze mail_outbox');
      await rolledBack(client, async () => {
        for (let claims = 0; claims < 6; claims++) await claimDueInTransaction(client, 2, LEASE);
        await queueBacklog(client, 100, pending);
        let claimed: Array<{ id: string }> = [];
        const read = await rowsRead(client, 'mail_outbox', async () => {
          claimed = await claimDueInTransaction(client, 8, LEASE);
        });
        expect(claimed).toHaveLength(8);
        expect(read).toBeLessThan(pending / 10);
      });
    });
  });
});

describe('claiming on statistics taken while every pending email was of one order', () => {
  it("reads each claimed email's order, not the backlog, and tells which have a newer email waiting", async () => {
    // Autovacuum analyzed the outbox while one order's emails were all that was pending; then thousands of orders'
    // emails came, and the connection kept the claim's generic plan. Asked by `min(id)` and `exists`, PostgreSQL
    // planned both probes as walks of the primary key past every pending email.
    await onOwnDatabase(async (client) => {
      const pending = 4000;
      await queueBacklog(client, 1, 60, `'SO0'`);
      await client.query('analyze mail_outbox');
      await client.query(`update mail_outbox set state = 'sent', sent_at = now()`);
      // Two emails each for the first ten orders, one for the rest: the first ten claimed have a newer one waiting.
      await queueBacklog(client, 2, 20, `'SO' || (n / 2)`);
      await queueBacklog(client, 100, pending);
      await rolledBack(client, async () => {
        await client.query('set local plan_cache_mode = force_generic_plan');
        let claimed: ClaimedMail[] = [];
        const read = await rowsRead(client, 'mail_outbox', async () => {
          claimed = await claimDueInTransaction(client, 16, LEASE);
        });
        const orders = (first: number, count: number) =>
          [...Array(count).keys()].map((n) => `SO${first + n}`);
        expect(claimed.map((mail) => mail.key)).toEqual([...orders(1, 10), ...orders(100, 6)]);
        expect(claimed.map((mail) => mail.nextPending)).toEqual([
          ...Array(10).fill(true),
          ...Array(6).fill(false),
        ]);
        expect(read).toBeLessThan(pending / 10);
      });
    });
  });
});

describe('renewing leases', () => {
  it('extends the lease of an email its claim still holds, and not one claimed again after its lease ran out', async () => {
    const [a1, b1] = await queue('A', 'B');
    const claimed = await claimDue(db.pool, 10, LEASE);
    const lease = (id: string | undefined) => {
      const mail = claimed.find((m) => m.id === id);
      return { id: mail?.id as string, attempts: mail?.attempts as number };
    };
    // b1's lease ran out and another instance claimed it again: its attempts moved on.
    await db.pool.query(`update mail_outbox set next_attempt_at = now() where id = $1::bigint`, [b1]);
    expect(ids(await claimDue(db.pool, 10, LEASE))).toEqual([b1]);

    await db.pool.query(`update mail_outbox set next_attempt_at = now() where id = $1::bigint`, [a1]);
    const held = await renewLeases(db.pool, [lease(a1), lease(b1)], LEASE);
    expect([...held]).toEqual([a1]);
    const { rows } = await db.pool.query<{ leftSeconds: number }>(
      `select extract(epoch from next_attempt_at - now())::float8 as "leftSeconds" from mail_outbox where id = $1::bigint`,
      [a1],
    );
    expect(rows[0]?.leftSeconds).toBeGreaterThan(LEASE - 5);
  });

  it('does not renew an email already sent', async () => {
    await queue('A');
    const [mail] = await claimDue(db.pool, 10, LEASE);
    await markSent(db.pool, [mail?.id as string]);
    expect(await renewLeases(db.pool, [{ id: mail?.id as string, attempts: 1 }], LEASE)).toEqual(new Set());
  });
});
