// A relay's refusals as real relays word them, addresses in the reply, a relay whose TLS fails, and a PostgreSQL
// error whose detail quotes a row: each is logged with its codes and never with an address, and the outbox keeps
// its reason without one. The log guard (test/support/logGuard.ts) fails any of these tests whose service logs a
// recipient's address.
import { describe, expect, it } from 'vitest';
import { salesOrderEvent } from '../../sandbox/s4Events.js';
import { startSmtpServer } from '../../sandbox/smtpServer.js';
import type { Service } from '../../src/service/buildService.js';
import { createTestDatabase } from '../support/database.js';
import { startTestService } from '../support/harness.js';
import { orderMaker } from '../support/orders.js';
import { addRecipients } from '../support/recipients.js';
import { useService } from '../support/useService.js';
import { eventually } from '../support/waits.js';
import { useWorld } from '../support/world.js';

const world = useWorld();
const lines: string[] = [];
const running = useService(world, { logLines: lines, env: { LOG_LEVEL: 'info', MAIL_LEASE_SECONDS: '5' } });
const { newOrder } = orderMaker(() => world.s4, 7_300_000);
let nextParty = 17_300_000;

interface Entry {
  msg: string;
  salesOrder?: string;
  err?: Record<string, unknown>;
  refused?: Array<Record<string, unknown>>;
}

/** A sold-to party of its own whose emails go to `recipients`, each watched by the log guard. */
async function customer(...recipients: string[]): Promise<string> {
  const soldToParty = String(nextParty++);
  await addRecipients(world.db.pool, { soldToParty, recipients });
  return soldToParty;
}

/** A new order of the sold-to party, announced by webhook; resolves after commit with its number. */
async function notify(soldToParty: string, service: Service = running.service): Promise<string> {
  const salesOrder = newOrder({ soldToParty });
  const res = await fetch(`${service.url}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/cloudevents+json' },
    body: salesOrderEvent({ salesOrder }),
  });
  expect(res.status).toBe(200);
  return salesOrder;
}

function logged(from: string[], msg: string, salesOrder: string): Entry[] {
  return from
    .map((line) => JSON.parse(line) as Entry)
    .filter((entry) => entry.msg === msg && entry.salesOrder === salesOrder);
}

function loggedOnce(msg: string, salesOrder: string, from = lines): Promise<Entry> {
  return eventually(`"${msg}" for ${salesOrder}`, async () => logged(from, msg, salesOrder)[0], 20_000);
}

async function outbox(salesOrder: string): Promise<{ state: string; lastError: string | null }> {
  const { rows } = await world.db.pool.query(
    `select state, last_error as "lastError" from mail_outbox where family = 'salesOrder' and key = $1`,
    [salesOrder],
  );
  expect(rows).toHaveLength(1);
  return rows[0];
}

async function mailCounter(result: string): Promise<number> {
  const res = await running.service.app.inject({ method: 'GET', url: '/metrics' });
  const line = res.body.split('\n').find((l) => l.startsWith(`fon_mail_total{result="${result}"}`));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

/** What nodemailer hangs on its error and must never reach a log line. */
function expectNoForeignFields(err: Record<string, unknown> | undefined): void {
  for (const field of ['rejected', 'rejectedErrors', 'envelope', 'response', 'recipient', 'detail']) {
    expect(err).not.toHaveProperty(field);
  }
}

describe('a relay that refuses, logged without addresses', () => {
  it('parks an email whose only recipient the relay refuses at RCPT (550 5.1.1), with its reply codes and no address', async () => {
    const gone = 'gone.buyer@customer-550.example';
    const salesOrder = await notify(await customer(gone));
    world.smtp.setRefuseRecipient((address) => (address === gone ? 'unknown' : 'accept'));
    try {
      const parked = await loggedOnce('mail parked', salesOrder);
      expect(parked.err).toMatchObject({
        kind: 'permanent',
        code: 'EENVELOPE',
        responseCode: 550,
        enhancedStatus: '5.1.1',
        command: 'RCPT TO',
        refused: 1,
      });
      expect(parked.err?.message).toContain('[address]');
      expectNoForeignFields(parked.err);
      const row = await outbox(salesOrder);
      expect(row.state).toBe('parked');
      expect(row.lastError).toContain('550 5.1.1 <[address]>: Recipient address rejected');
      expect(row.lastError).not.toContain(gone);
    } finally {
      world.smtp.setRefuseRecipient(undefined);
    }
  });

  it('sends to the recipient the relay takes when it refuses the other (550), counts it partial and logs the refusal without an address', async () => {
    const kept = 'kept.buyer@customer-partial.example';
    const gone = 'gone.buyer@customer-partial.example';
    const partialBefore = await mailCounter('partial');
    world.smtp.setRefuseRecipient((address) => (address === gone ? 'unknown' : 'accept'));
    try {
      const salesOrder = await notify(await customer(kept, gone));
      const refused = await loggedOnce('mail refused for some recipients', salesOrder);
      expect(refused.refused).toEqual([
        expect.objectContaining({
          code: 'EENVELOPE',
          responseCode: 550,
          enhancedStatus: '5.1.1',
          command: 'RCPT TO',
        }),
      ]);
      expectNoForeignFields(refused.refused?.[0]);
      const received = world.smtp.messages.filter((mail) => mail.headers['x-sales-order'] === salesOrder);
      expect(received.map((mail) => mail.to)).toEqual([[kept]]);
      expect((await outbox(salesOrder)).state).toBe('sent');
      expect(await mailCounter('partial')).toBe(partialBefore + 1);
      expect(logged(lines, 'mail sent', salesOrder)).toEqual([]);
    } finally {
      world.smtp.setRefuseRecipient(undefined);
    }
  });

  it('parks an email the relay refuses after DATA (554 5.7.1 naming the recipient), with its reply codes and no address', async () => {
    const buyer = 'buyer@customer-554.example';
    world.smtp.setRefuse(({ to }) => (to.includes(buyer) ? 'spam' : 'accept'));
    try {
      const salesOrder = await notify(await customer(buyer));
      const parked = await loggedOnce('mail parked', salesOrder);
      expect(parked.err).toMatchObject({
        kind: 'permanent',
        code: 'EMESSAGE',
        responseCode: 554,
        enhancedStatus: '5.7.1',
        command: 'DATA',
      });
      expectNoForeignFields(parked.err);
      const row = await outbox(salesOrder);
      expect(row.state).toBe('parked');
      expect(row.lastError).toContain('554 5.7.1 Message to <[address]> rejected');
      expect(row.lastError).not.toContain(buyer);
    } finally {
      world.smtp.setRefuse(undefined);
    }
  });

  it('retries an email whose only recipient gets 452 4.2.2 at RCPT and sends it once the mailbox takes mail', async () => {
    const buyer = 'full.mailbox@customer-452.example';
    let full = true;
    world.smtp.setRefuseRecipient((address) => (address === buyer && full ? 'full' : 'accept'));
    try {
      const salesOrder = await notify(await customer(buyer));
      const failed = await loggedOnce('mail send failed, will retry', salesOrder);
      expect(failed.err).toMatchObject({
        kind: 'transient',
        code: 'EENVELOPE',
        responseCode: 452,
        enhancedStatus: '4.2.2',
        command: 'RCPT TO',
      });
      expectNoForeignFields(failed.err);
      const waiting = await outbox(salesOrder);
      expect(waiting.lastError).toContain('452 4.2.2 <[address]>: Recipient address rejected: Mailbox full');
      full = false;
      await loggedOnce('mail sent', salesOrder);
      expect(world.smtp.messages.filter((mail) => mail.headers['x-sales-order'] === salesOrder)).toHaveLength(
        1,
      );
    } finally {
      world.smtp.setRefuseRecipient(undefined);
    }
  });

  it("retries an email when the relay's STARTTLS certificate is not trusted, logging the TLS failure without an address", async () => {
    // A service of its own on a database of its own, so that the file's service cannot send this email.
    const [db, relay] = await Promise.all([createTestDatabase(), startSmtpServer({ untrustedTls: true })]);
    const tlsLines: string[] = [];
    const service = await startTestService({
      ...world.endpoints(),
      databaseUrl: db.url,
      smtpUrl: relay.url,
      logLines: tlsLines,
      env: { LOG_LEVEL: 'info' },
    });
    try {
      const salesOrder = await notify('17100001', service);
      const failed = await loggedOnce('mail send failed, will retry', salesOrder, tlsLines);
      expect(failed.err).toMatchObject({ kind: 'transient', code: 'ESOCKET' });
      expect(failed.err?.message).toMatch(/certificate/);
      expectNoForeignFields(failed.err);
      expect(relay.messages).toEqual([]);
    } finally {
      await service.stop();
      await Promise.all([relay.close(), db.drop()]);
    }
  });
});

describe('a PostgreSQL error whose detail quotes the row', () => {
  it('logs the failed sent mark by its SQLSTATE, constraint and table, never the detail that names the recipient', async () => {
    const buyer = 'row.value@customer-pg.example';
    // A check the sent mark fails: PostgreSQL's detail then reads "Failing row contains (… {buyer} …)".
    await world.db.pool.query(
      `alter table mail_outbox add constraint mail_outbox_no_sent_row_value
       check (state <> 'sent' or not ('${buyer}' = any(recipients)))`,
    );
    try {
      const salesOrder = await notify(await customer(buyer));
      const failed = await loggedOnce(
        'mail sent but not recorded; it goes again when its lease runs out',
        salesOrder,
      );
      expect(failed.err).toMatchObject({
        code: '23514',
        constraint: 'mail_outbox_no_sent_row_value',
        table: 'mail_outbox',
      });
      expectNoForeignFields(failed.err);
    } finally {
      await world.db.pool.query('alter table mail_outbox drop constraint mail_outbox_no_sent_row_value');
    }
  });
});
