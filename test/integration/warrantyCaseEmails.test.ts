// What the fleet manager reads of a warranty case, end to end: customer-return events through the webhook, the
// S/4HANA stand-in, real PostgreSQL, and the emails as the real SMTP stand-in received them. One email per real
// change of the case's status, threaded per case, rendered as a case's email and not an order's.
import { describe, expect, it } from 'vitest';
import { customerReturnEvent } from '../../sandbox/s4Events.js';
import type { CustomerReturnState } from '../../sandbox/s4Returns.js';
import type { ReceivedMail } from '../../sandbox/smtpServer.js';
import { returnState } from '../support/returns.js';
import { useService } from '../support/useService.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const world = useWorld();
const running = useService(world);

let nextReturn = 62_000_000;
let clock = Date.parse('2026-11-30T10:00:00Z');

function mailsFor(customerReturn: string): ReceivedMail[] {
  return world.smtp.messages.filter((mail) => mail.headers['x-customer-return'] === customerReturn);
}

/** Changes the return in S/4HANA as a later state, or deletes it (null). */
function change(customerReturn: string, fields: Partial<CustomerReturnState> | null): void {
  if (fields === null) {
    world.s4.returns.deleteReturn(customerReturn);
    return;
  }
  clock += 60_000;
  world.s4.returns.setReturn(
    returnState(customerReturn, { ...fields, lastChangeDateTime: new Date(clock).toISOString() }),
  );
}

/** Pushes an event for the return; resolves after commit. */
async function push(customerReturn: string, type: string): Promise<void> {
  const answer = await fetch(`${running.service.url}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/cloudevents+json' },
    body: customerReturnEvent(customerReturn, type),
  });
  expect(answer.status).toBe(200);
}

async function mailNumber(customerReturn: string, n: number): Promise<ReceivedMail> {
  return eventually(`email ${n} of return ${customerReturn}`, async () => mailsFor(customerReturn)[n - 1]);
}

describe('warranty-case emails', () => {
  it('tells a new case, each change of its status once, and its withdrawal, in one conversation', async () => {
    const customerReturn = String(nextReturn++);
    change(customerReturn, { overallSDProcessStatus: 'A' });
    await push(customerReturn, 'Created');
    const first = await mailNumber(customerReturn, 1);
    expect(first.subject).toBe(
      `Customer return ${customerReturn} for sales order 1000473: new warranty case, open`,
    );
    expect(first.headers['x-case-status']).toBe('Open');
    expect(first.headers['x-sales-order']).toBe('1000473');
    expect(first.headers['x-portal-status']).toBeUndefined();
    expect(first.headers['in-reply-to']).toBeUndefined();
    expect(first.to).toEqual(['fleet-manager@fleet.example']);

    // An item changed, the status did not: no email. Then the status changes: one email, answering the first.
    change(customerReturn, { overallSDProcessStatus: 'A', customerReference: 'RMA 7732' });
    await push(customerReturn, 'ItemChanged');
    change(customerReturn, { overallSDProcessStatus: 'B' });
    await push(customerReturn, 'Changed');
    await push(customerReturn, 'ItemChanged');
    const second = await mailNumber(customerReturn, 2);
    expect(second.headers['x-case-status']).toBe('InProcess');
    expect(second.headers['in-reply-to']).toBe(first.messageId);
    expect(second.text).toContain('Status: Open → In process');

    change(customerReturn, null);
    await push(customerReturn, 'Deleted');
    const third = await mailNumber(customerReturn, 3);
    expect(third.headers['x-case-status']).toBe('Withdrawn');
    expect(third.headers['in-reply-to']).toBe(first.messageId);
    expect(third.text).toContain('Status: In process → Withdrawn');
    expect(mailsFor(customerReturn)).toHaveLength(3);

    const metrics = await running.service.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(
      /^fon_events_total\{channel="webhook",outcome="applied",reason="",family="customer_return"\} [1-9]/m,
    );
  });

  it('sends nothing for a return that is gone before its first read after Deleted', async () => {
    const customerReturn = String(nextReturn++);
    await push(customerReturn, 'Deleted');
    const { rows } = await world.db.pool.query(
      `select outcome from processed_event where family = 'customerReturn' and key = $1`,
      [customerReturn],
    );
    expect(rows).toEqual([{ outcome: 'not_found' }]);
    expect(mailsFor(customerReturn)).toHaveLength(0);
  });
});
