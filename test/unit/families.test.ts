// The registry of event families: each CloudEvent type finds at most one family, and each family renders and
// pushes the rows of its own name in the shared outboxes, refusing content it never wrote (the database checks
// only that content is a JSON object; what a family's rows hold is the family's to check).
import { describe, expect, it } from 'vitest';
import { PermanentError } from '../../src/errors.js';
import { FAMILIES, familyNamed, familyOfType } from '../../src/families/index.js';
import type { ClaimedMail } from '../../src/notifications/mailOutbox.js';
import type { ClaimedPush } from '../../src/portal/pushOutbox.js';

/** A row of each family as its effect writes it: each family must have one here, and what a row must hold. */
const ROWS: Record<string, { key: string; mail: object; push: object; required: string[] }> = {
  salesOrder: {
    key: '1000473',
    mail: {
      portalStatus: 'Delivered',
      requestedDeliveryDate: '2026-12-15',
      soldToParty: '17100001',
      customerReference: 'PO-1',
      previousPortalStatus: 'Open',
      previousRequestedDeliveryDate: null,
    },
    push: {
      salesOrder: '1000473',
      portalStatus: 'Delivered',
      requestedDeliveryDate: null,
      soldToParty: '17100001',
      customerReference: null,
      s4ChangedAt: '2026-03-01T08:00:00.000Z',
    },
    required: ['portalStatus'],
  },
  customerReturn: {
    key: '60000001',
    mail: {
      caseStatus: 'Open',
      previousCaseStatus: null,
      salesOrder: null,
      returnReasons: ['003'],
      soldToParty: null,
      customerReference: null,
    },
    push: {
      customerReturn: '60000001',
      caseStatus: 'Open',
      soldToParty: null,
      customerReference: null,
      salesOrder: '1000473',
      returnReasons: [],
      s4ChangedAt: null,
    },
    required: ['caseStatus', 'returnReasons'],
  },
};

function mailOf(family: string, key: string, content: unknown): ClaimedMail {
  return {
    id: '1',
    family,
    key,
    content,
    recipients: ['fleet@example.com'],
    messageId: '<m@fleet.example>',
    attempts: 1,
    change: 'new',
    locale: null,
    inReplyTo: null,
    traceParent: null,
    nextPending: false,
  };
}

const pushOf = (family: string, key: string, content: unknown): ClaimedPush => ({
  family,
  key,
  content,
  pushId: 'k',
  attempts: 1,
  claims: 1,
});

const settings = { from: 'notifier@fleet.example', locale: 'en' };

describe('the event families', () => {
  it('finds the family of each handled type and none for other types', () => {
    expect(familyOfType('sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1')?.name).toBe('salesOrder');
    expect(familyOfType('sap.s4.beh.customerreturn.v1.CustomerReturn.ItemChanged.v1')?.name).toBe(
      'customerReturn',
    );
    expect(familyOfType('sap.s4.beh.outbounddelivery.v1.OutboundDelivery.Created.v1')).toBeUndefined();
  });

  it('gives each family its own name, metric label and type prefix', () => {
    for (const property of ['name', 'label', 'logKey', 'spanKey'] as const) {
      const values = FAMILIES.map((family) => family[property]);
      expect(new Set(values).size, property).toBe(FAMILIES.length);
    }
    expect(FAMILIES.map((family) => family.label)).toEqual(['sales_order', 'customer_return']);
    const owners = (type: string) => FAMILIES.filter((family) => family.owns(type)).length;
    expect(owners('sap.s4.beh.salesorder.v1.SalesOrder.Created.v1')).toBe(1);
    expect(owners('sap.s4.beh.customerreturn.v1.CustomerReturn.Created.v1')).toBe(1);
  });

  it('finds each family by the name its rows carry, and none for no name', () => {
    for (const family of FAMILIES) {
      expect(familyNamed(family.name)).toBe(family);
      // Its timeline reads the rows of its name.
      expect(family.admin.timeline.family).toBe(family.name);
    }
    expect(familyNamed(undefined)).toBeUndefined();
    expect(familyNamed('order')).toBeUndefined();
  });

  it('renders and pushes the rows its effect writes, the key from the row', () => {
    expect(Object.keys(ROWS).sort()).toEqual(FAMILIES.map((family) => family.name).sort());
    for (const family of FAMILIES) {
      const row = ROWS[family.name];
      if (row === undefined) throw new Error(`no sample rows of ${family.name}`);
      const email = family.mail.render(mailOf(family.name, row.key, row.mail), settings);
      expect(email.subject).toContain(row.key);
      const { path, body } = family.push.request(pushOf(family.name, row.key, row.push));
      expect(path).toContain(row.key);
      expect(body).toEqual(row.push);
    }
  });

  it('refuses, for good, content that is no object or lacks what its rows must hold', () => {
    for (const family of FAMILIES) {
      const row = ROWS[family.name];
      if (row === undefined) throw new Error(`no sample rows of ${family.name}`);
      const refusals = [
        null,
        'text',
        [row.mail],
        ...row.required.map((field) => ({ ...row.mail, [field]: null })),
      ];
      for (const content of refusals) {
        expect(() => family.mail.render(mailOf(family.name, row.key, content), settings)).toThrow(
          PermanentError,
        );
      }
      for (const content of [null, 42, ...row.required.map((field) => ({ ...row.push, [field]: null }))]) {
        expect(() => family.push.request(pushOf(family.name, row.key, content))).toThrow(PermanentError);
      }
    }
  });
});
