// What the fleet manager reads, end to end: events through the webhook, the S/4HANA stand-in, real PostgreSQL,
// and the email as the real SMTP stand-in received it, parsed by mailparser.

import { describe, expect, it } from 'vitest';
import { salesOrderEvent } from '../../sandbox/s4Events.js';
import type { SalesOrderState } from '../../sandbox/s4Server.js';
import type { ReceivedMail } from '../../sandbox/smtpServer.js';
import { startTestService } from '../support/harness.js';
import { orderMaker } from '../support/orders.js';
import { addRecipients } from '../support/recipients.js';
import { useService } from '../support/useService.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const world = useWorld();
const PORTAL = 'https://portal.example/orders/{salesOrder}?view=status&lang=auto';
const running = useService(world, { env: { PORTAL_ORDER_URL: PORTAL } });

const { newOrder, changeOrder } = orderMaker(() => world.s4, 6_000_000);
let clock = Date.parse('2026-11-30T10:00:00Z');

function mailsFor(salesOrder: string): ReceivedMail[] {
  return world.smtp.messages.filter((mail) => mail.headers['x-sales-order'] === salesOrder);
}

/** Changes the order in S/4HANA, as a later state (newer LastChangeDateTime). */
function change(salesOrder: string, state: Partial<SalesOrderState>): void {
  clock += 60_000;
  changeOrder(salesOrder, { ...state, lastChangeDateTime: new Date(clock).toISOString() });
}

/** Pushes an event for the order; resolves with the webhook's answer, after commit. */
function push(salesOrder: string, target = running.service): Promise<Response> {
  return fetch(`${target.url}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/cloudevents+json' },
    body: salesOrderEvent({ salesOrder }),
  });
}

/** Changes the order in S/4HANA (if asked), pushes an event for it and returns the email it caused. */
async function notify(salesOrder: string, state?: Partial<SalesOrderState>, target = running.service) {
  if (state !== undefined) change(salesOrder, state);
  const before = mailsFor(salesOrder).length;
  expect((await push(salesOrder, target)).status).toBe(200);
  return eventually(`email ${before + 1} of order ${salesOrder}`, async () => mailsFor(salesOrder)[before]);
}

describe('what an email says', () => {
  it('calls the first email of an order a new order and states its status and date', async () => {
    const salesOrder = newOrder({ customerReference: 'CITYCAB-7731 8 electric taxis' });
    const mail = await notify(salesOrder);
    expect(mail.subject).toBe(`Sales order ${salesOrder} (CITYCAB-7731): new order, open`);
    expect(mail.text).toBe(
      `Sales order ${salesOrder}\n\nNew order\n\nStatus: Open\nRequested delivery date: 15 Dec 2026\n` +
        'Customer reference: CITYCAB-7731 8 electric taxis\nSold-to party: 17100001\n\n' +
        `Open the order in the fleet portal: https://portal.example/orders/${salesOrder}?view=status&lang=auto\n`,
    );
    expect(mail.headers['x-sales-order']).toBe(salesOrder);
    expect(mail.headers['x-portal-status']).toBe('Open');
    expect(mail.headers['x-requested-delivery-date']).toBe('2026-12-15');
    expect(mail.messageId).toMatch(/^<[0-9a-f-]{36}@fleet\.example>$/);
    expect(mail.headers['in-reply-to']).toBeUndefined();
    expect(mail.headers.references).toBeUndefined();
  });

  it('says how far the delivery date moved, forward and back', async () => {
    const salesOrder = newOrder({ customerReference: 'PO-4711' });
    await notify(salesOrder);
    const later = await notify(salesOrder, { requestedDeliveryDate: '2027-01-12' });
    expect(later.subject).toBe(`Sales order ${salesOrder} (PO-4711): delivery date moved to 12 Jan 2027`);
    expect(later.text).toContain(
      '\n\nRequested delivery date moved from 15 Dec 2026 to 12 Jan 2027 (+28 days)\n\n',
    );
    expect(later.headers['x-requested-delivery-date']).toBe('2027-01-12');
    const earlier = await notify(salesOrder, { requestedDeliveryDate: '2027-01-07' });
    expect(earlier.subject).toBe(`Sales order ${salesOrder} (PO-4711): delivery date moved to 7 Jan 2027`);
    expect(earlier.text).toContain(
      'Requested delivery date moved from 12 Jan 2027 to 7 Jan 2027 (-5 days)\n',
    );
  });

  it('names the old and the new status when the status changes', async () => {
    const salesOrder = newOrder({ overallDeliveryStatus: 'B' });
    await notify(salesOrder);
    const mail = await notify(salesOrder, { overallDeliveryStatus: 'C' });
    expect(mail.subject).toBe(`Sales order ${salesOrder} (PO-4711): delivered`);
    expect(mail.text).toContain('\n\nStatus: Partially delivered → Delivered\n\nStatus: Delivered\n');
    expect(mail.text).not.toContain('moved');
    expect(mail.headers['x-portal-status']).toBe('Delivered');
  });

  it('says both when status and date change at once', async () => {
    const salesOrder = newOrder({ overallDeliveryStatus: 'B' });
    await notify(salesOrder);
    const mail = await notify(salesOrder, {
      overallDeliveryStatus: 'C',
      requestedDeliveryDate: '2027-01-12',
    });
    expect(mail.subject).toBe(
      `Sales order ${salesOrder} (PO-4711): delivered; delivery date moved to 12 Jan 2027`,
    );
    expect(mail.text).toContain(
      'Requested delivery date moved from 15 Dec 2026 to 12 Jan 2027 (+28 days)\n' +
        'Status: Partially delivered → Delivered\n',
    );
  });

  it('says the delivery date was removed, names the old one and drops the date header', async () => {
    const salesOrder = newOrder();
    await notify(salesOrder);
    const mail = await notify(salesOrder, { requestedDeliveryDate: null });
    expect(mail.subject).toBe(`Sales order ${salesOrder} (PO-4711): delivery date removed`);
    expect(mail.text).toContain('Requested delivery date removed (was 15 Dec 2026)\n');
    expect(mail.text).toContain('Requested delivery date: not set\n');
    expect(mail.headers).not.toHaveProperty('x-requested-delivery-date');
  });
});

describe('the previous pair', () => {
  it('is the pair a concurrent effect committed while this one waited, not the one its snapshot saw', async () => {
    const salesOrder = newOrder({ overallDeliveryStatus: 'B' });
    await notify(salesOrder);
    // A concurrent effect of the same order holds the portal row and has recorded a newer pair, not committed.
    const concurrent = await world.db.pool.connect();
    try {
      await concurrent.query('begin');
      await concurrent.query('select from portal_order_status where sales_order = $1 for update', [
        salesOrder,
      ]);
      await concurrent.query(
        `update order_notification set previous_portal_status = portal_status, portal_status = 'InProcess'
         where sales_order = $1`,
        [salesOrder],
      );
      change(salesOrder, { overallDeliveryStatus: 'C' });
      const answer = push(salesOrder);
      await eventually('the effect to wait for the portal row', async () => {
        // The effect's statement, waiting for a lock (its text is longer than pg_stat_activity keeps).
        const { rows } = await world.db.pool.query<{ n: number }>(
          `select count(*)::int as "n" from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock' and query like 'with portal as%'`,
        );
        return (rows[0]?.n ?? 0) > 0;
      });
      await concurrent.query('commit');
      expect((await answer).status).toBe(200);
    } finally {
      await concurrent.query('rollback');
      concurrent.release();
    }
    const mail = await eventually('the second email', async () => mailsFor(salesOrder)[1]);
    expect(mail.text).toContain('\n\nStatus: In process → Delivered\n\n');
  });
});

describe('language', () => {
  it('writes German to a sold-to party whose locale is de, and English to others', async () => {
    await addRecipients(world.db.pool, {
      soldToParty: '17100042',
      recipients: ['flotte@kunde.example'],
      locale: 'de',
    });
    const german = newOrder({ soldToParty: '17100042', overallDeliveryStatus: 'B' });
    const english = newOrder({ overallDeliveryStatus: 'B' });
    const first = await notify(german);
    expect(first.to).toEqual(['flotte@kunde.example']);
    expect(first.subject).toBe(`Kundenauftrag ${german} (PO-4711): neuer Auftrag, teilweise geliefert`);
    const mail = await notify(german, { overallDeliveryStatus: 'C', requestedDeliveryDate: '2027-01-12' });
    expect(mail.subject).toBe(
      `Kundenauftrag ${german} (PO-4711): geliefert; Wunschlieferdatum verschoben auf 12. Jan. 2027`,
    );
    expect(mail.text).toBe(
      `Kundenauftrag ${german}\n\n` +
        'Wunschlieferdatum verschoben von 15. Dez. 2026 auf 12. Jan. 2027 (+28 Tage)\n' +
        'Status: Teilweise geliefert → Geliefert\n\n' +
        'Status: Geliefert\nWunschlieferdatum: 12. Jan. 2027\nBestellnummer des Kunden: PO-4711\n' +
        `Auftraggeber: 17100042\n\nAuftrag im Flottenportal öffnen: https://portal.example/orders/${german}?view=status&lang=auto\n`,
    );
    expect(mail.headers['x-portal-status']).toBe('Delivered'); // headers stay machine-readable
    const other = await notify(english);
    expect(other.subject).toBe(`Sales order ${english} (PO-4711): new order, partially delivered`);
  });

  it('writes MAIL_LOCALE to sold-to parties without a locale of their own', async () => {
    const german = await startTestService({
      ...world.endpoints(),
      // Instances of one deployment share their configuration: either may send what the other queued.
      env: { MAIL_LOCALE: 'de', PORTAL_ORDER_URL: PORTAL },
    });
    try {
      const salesOrder = newOrder();
      const mail = await notify(salesOrder, undefined, german);
      expect(mail.subject).toBe(`Kundenauftrag ${salesOrder} (PO-4711): neuer Auftrag, offen`);
      expect(mail.text).toContain('Wunschlieferdatum: 15. Dez. 2026\n');
    } finally {
      await german.stop();
    }
  });
});

describe('link to the order', () => {
  it('puts the order key URL-encoded into the link of the text and the HTML part', async () => {
    // Keys from events are letters and digits only; the email does not rely on that. An email for a key that
    // needs encoding is queued straight into the outbox, as the effect would queue it.
    const salesOrder = 'A/B 1&?#';
    await world.db.pool.query(
      `insert into mail_outbox (family, key, content, recipients, message_id, change, locale)
       values ('salesOrder', $1, '{"portalStatus": "Open"}', $2, $3, 'new', 'en')`,
      [salesOrder, ['fleet-manager@fleet.example'], '<encoding-test@fleet.example>'],
    );
    const [mail] = await eventually('the email for the odd key', async () => {
      const mails = mailsFor(salesOrder);
      return mails.length > 0 && mails;
    });
    const link = 'https://portal.example/orders/A%2FB%201%26%3F%23?view=status&lang=auto';
    expect(mail?.text).toContain(`Open the order in the fleet portal: ${link}\n`);
    expect(mail?.html).toContain(
      `<a href="${link.replace('&', '&#38;')}">Open the order in the fleet portal</a>`,
    );
  });
});

describe('threading', () => {
  it('makes every later email of an order answer its first one', async () => {
    const salesOrder = newOrder();
    const first = await notify(salesOrder);
    const second = await notify(salesOrder, { requestedDeliveryDate: '2027-01-12' });
    const third = await notify(salesOrder, { overallDeliveryStatus: 'C' });
    for (const mail of [second, third]) {
      expect(mail.headers['in-reply-to']).toBe(first.messageId);
      expect(mail.headers.references).toBe(first.messageId);
    }
    expect(new Set([first.messageId, second.messageId, third.messageId]).size).toBe(3);
  });
});

describe('hostile S/4HANA free text', () => {
  it('cannot add headers, recipients or markup through the customer reference', async () => {
    const hostile =
      '<b>PO</b><script>alert(1)</script>\r\nBcc: intruder@example.com\r\nX-Injected: yes\r\n\r\n<img src=x onerror=alert(2)>';
    const salesOrder = newOrder({ customerReference: hostile });
    const mail = await notify(salesOrder);
    expect(mail.to).toEqual(['fleet-manager@fleet.example']);
    expect(Object.keys(mail.headers)).not.toContain('bcc');
    expect(Object.keys(mail.headers)).not.toContain('x-injected');
    expect(mail.raw).not.toMatch(/^(Bcc|X-Injected):/im);
    expect(mail.subject).toBe(`Sales order ${salesOrder} (<b>PO</b><script>al…): new order, open`);
    expect(mail.html).not.toMatch(/<(b|script|img)\b/i);
    expect(mail.html).toContain(
      '&#60;script&#62;alert(1)&#60;/script&#62; Bcc: intruder@example.com X-Injected: yes',
    );
    expect(mail.text).toContain(
      'Customer reference: <b>PO</b><script>alert(1)</script> Bcc: intruder@example.com X-Injected: yes <img src=x onerror=alert(2)>\n',
    );
  });
});

describe('a resend after a crash', () => {
  it('has the Message-ID, subject and body of the first send, though order and language changed since', async () => {
    await addRecipients(world.db.pool, { soldToParty: '17100043', recipients: ['resend@kunde.example'] });
    const salesOrder = newOrder({ soldToParty: '17100043' });
    await notify(salesOrder);
    const first = await notify(salesOrder, { requestedDeliveryDate: '2027-01-12' });
    // Since then the order changed again and its customer chose German.
    await world.db.pool.query(`update mail_recipient set locale = 'de' where sold_to_party = $1`, [
      '17100043',
    ]);
    const next = await notify(salesOrder, { overallDeliveryStatus: 'C' });
    expect(next.subject).toMatch(/^Kundenauftrag/);
    // A crash after the relay accepted the email and before it was marked sent leaves it pending, due when its
    // lease runs out: this is that state, with the lease already over.
    await world.db.pool.query(
      `update mail_outbox set state = 'pending', sent_at = null, next_attempt_at = now() where message_id = $1`,
      [first.messageId],
    );
    const resend = await eventually('the resend', async () => mailsFor(salesOrder)[3]);
    expect(resend.messageId).toBe(first.messageId);
    expect(resend.subject).toBe(first.subject);
    expect(resend.text).toBe(first.text);
    expect(resend.html).toBe(first.html);
    expect(resend.headers['in-reply-to']).toBe(first.headers['in-reply-to']);
    expect(resend.subject).toBe(`Sales order ${salesOrder} (PO-4711): delivery date moved to 12 Jan 2027`);
  });
});
