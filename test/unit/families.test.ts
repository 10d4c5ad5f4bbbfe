// The registry of event families: each CloudEvent type finds at most one family, each family renders and pushes
// the rows of its own name in the shared outboxes, refusing content it never wrote (the database checks only that
// content is a JSON object; what a family's rows hold is the family's to check), and every port is filled from the
// one list.
import { describe, expect, it } from 'vitest';
import { PermanentError } from '../../src/errors.js';
import { keysNamed } from '../../src/events/family.js';
import {
  EVENT_KEYS,
  FAMILIES,
  FAMILY_ADMINS,
  FAMILY_EXPIRIES,
  mailKinds,
  PUSH_KINDS,
} from '../../src/families/index.js';
import { mailKindOf } from '../../src/notifications/mailKind.js';
import type { ClaimedMail } from '../../src/notifications/mailOutbox.js';
import { pushKindOf } from '../../src/portal/pushKind.js';
import type { ClaimedPush } from '../../src/portal/pushOutbox.js';

const familyOfType = (type: string) => EVENT_KEYS.find((family) => family.owns(type));
const SETTINGS = {
  salesOrder: { portalOrderUrl: undefined },
  customerReturn: { warrantyReturnReasons: undefined },
};
const MAIL_KINDS = mailKinds(SETTINGS);

/** A family's email and push, as the senders find them by the name a row carries. */
function portsOf(name: string) {
  const mail = mailKindOf(MAIL_KINDS, name);
  const push = pushKindOf(PUSH_KINDS, name);
  if (mail === undefined || push === undefined) throw new Error(`no email or push of ${name}`);
  return { mail, push };
}

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

  it('finds each family by the name its rows carry, and none for another name: none is taken for another', () => {
    for (const family of FAMILIES) {
      expect(mailKindOf(MAIL_KINDS, family.name)).toMatchObject({
        family: family.name,
        logKey: family.logKey,
        spanKey: family.spanKey,
      });
      expect(pushKindOf(PUSH_KINDS, family.name)).toMatchObject({
        family: family.name,
        logKey: family.logKey,
      });
      expect(keysNamed(EVENT_KEYS, family.name)).toBe(family);
      // Its timeline reads the rows of its name.
      expect(family.admin.timeline.family).toBe(family.name);
    }
    // `order` was a row kind, never a family's name.
    expect(mailKindOf(MAIL_KINDS, 'order')).toBeUndefined();
    expect(pushKindOf(PUSH_KINDS, 'order')).toBeUndefined();
    expect(keysNamed(EVENT_KEYS, undefined)).toBeUndefined();
    expect(keysNamed(EVENT_KEYS, 'order')).toBeUndefined();
  });

  it('renders and pushes the rows its effect writes, the key from the row', () => {
    expect(Object.keys(ROWS).sort()).toEqual(FAMILIES.map((family) => family.name).sort());
    for (const family of FAMILIES) {
      const row = ROWS[family.name];
      if (row === undefined) throw new Error(`no sample rows of ${family.name}`);
      const { mail, push } = portsOf(family.name);
      const email = mail.render(mailOf(family.name, row.key, row.mail), settings);
      expect(email.subject).toContain(row.key);
      const { path, body } = push.request(pushOf(family.name, row.key, row.push));
      expect(path).toContain(row.key);
      expect(body).toEqual(row.push);
    }
  });

  it('refuses, for good, content that is no object or lacks what its rows must hold', () => {
    for (const family of FAMILIES) {
      const row = ROWS[family.name];
      if (row === undefined) throw new Error(`no sample rows of ${family.name}`);
      const { mail, push } = portsOf(family.name);
      const refusals = [
        null,
        'text',
        [row.mail],
        ...row.required.map((field) => ({ ...row.mail, [field]: null })),
      ];
      for (const content of refusals) {
        expect(() => mail.render(mailOf(family.name, row.key, content), settings)).toThrow(PermanentError);
      }
      for (const content of [null, 42, ...row.required.map((field) => ({ ...row.push, [field]: null }))]) {
        expect(() => push.request(pushOf(family.name, row.key, content))).toThrow(PermanentError);
      }
    }
  });

  it("hands every port each family's part, in the registry's order", () => {
    expect(MAIL_KINDS.map((family) => family.family)).toEqual(FAMILIES.map((family) => family.name));
    expect(MAIL_KINDS.map((family) => family.logKey)).toEqual(FAMILIES.map((family) => family.logKey));
    expect(PUSH_KINDS.map((family) => family.family)).toEqual(FAMILIES.map((family) => family.name));
    expect(FAMILY_ADMINS).toEqual(FAMILIES.map((family) => family.admin));
    expect(FAMILY_EXPIRIES.map((expiry) => expiry.target)).toEqual(['caseTombstones']);
    const pages = FAMILY_ADMINS.map((admin) => admin.console.page);
    expect(new Set(pages).size).toBe(FAMILIES.length);
  });
});
