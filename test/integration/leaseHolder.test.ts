// Each claim writes its instance on the rows it leases (leased_by), and the name stays after the row is booked:
// whose lease an email or a push was when it went out, so a resend can be traced to its holder's crash.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newLeaseHolder } from '../../src/leasedOutbox/leaseHolder.js';
import { claimDue, markSent } from '../../src/notifications/mailOutbox.js';
import { bookPush, claimDuePushes } from '../../src/portal/pushOutbox.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const LEASE = 15;
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());
beforeEach(async () => {
  await db.pool.query('truncate mail_outbox, portal_push');
});

async function holderOf(table: 'mail_outbox' | 'portal_push'): Promise<string | null | undefined> {
  const { rows } = await db.pool.query<{ leasedBy: string | null }>(
    `select leased_by as "leasedBy" from ${table}`,
  );
  return rows[0]?.leasedBy;
}

/** Lets the row's lease run out, as after a crash of its holder. */
async function expireLeases(): Promise<void> {
  await db.pool.query(`update mail_outbox set next_attempt_at = now() - interval '1 second'`);
  await db.pool.query(`update portal_push set leased_until = now() - interval '1 second'`);
}

describe('the lease holder', () => {
  it('is written by each claim of an email, replaced by the next claim and kept once the email is sent', async () => {
    await db.pool.query(
      `insert into mail_outbox (family, key, content, recipients, message_id)
       values ('salesOrder', 'A', '{"portalStatus": "Open"}', array['fleet-manager@fleet.example'], '<held@fleet.example>')`,
    );
    expect(await holderOf('mail_outbox')).toBeNull();
    await claimDue(db.pool, 10, LEASE, 'instance-a');
    expect(await holderOf('mail_outbox')).toBe('instance-a');

    await expireLeases();
    const [mail] = await claimDue(db.pool, 10, LEASE, 'instance-b');
    expect(mail?.attempts).toBe(2);
    expect(await holderOf('mail_outbox')).toBe('instance-b');

    await markSent(db.pool, [mail?.id ?? '']);
    expect(await holderOf('mail_outbox')).toBe('instance-b');
  });

  it('is written by each claim of a push, replaced by the next claim and kept once the answer is booked', async () => {
    const pushId = randomUUID();
    await db.pool.query(
      `insert into portal_push (family, key, content, push_id)
       values ('salesOrder', 'A', '{"portalStatus": "Open"}', $1::uuid)`,
      [pushId],
    );
    await claimDuePushes(db.pool, 10, LEASE, 'instance-a');
    expect(await holderOf('portal_push')).toBe('instance-a');

    await expireLeases();
    const [push] = await claimDuePushes(db.pool, 10, LEASE, 'instance-b');
    expect(push?.claims).toBe(2);
    expect(await holderOf('portal_push')).toBe('instance-b');

    const booked = await bookPush(db.pool, push ?? { family: 'salesOrder', key: 'A', claims: 2, pushId }, {
      kind: 'done',
      result: 'pushed',
    });
    expect(booked).toBe(true);
    expect(await holderOf('portal_push')).toBe('instance-b');
  });

  it('names the host and the process, and tells apart two starts of the same process id', () => {
    const first = newLeaseHolder();
    expect(first.startsWith(`${hostname()}:${process.pid}:`)).toBe(true);
    expect(newLeaseHolder()).not.toBe(first);
  });
});
