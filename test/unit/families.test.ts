// The registry of event families: each CloudEvent type finds at most one family, each outbox kind exactly one,
// the kinds the families render are the ones the database allows, and every port is filled from the one list.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { keysNamed } from '../../src/events/family.js';
import {
  EVENT_KEYS,
  FAMILIES,
  FAMILY_ADMINS,
  FAMILY_EXPIRIES,
  mailKinds,
  PUSH_KINDS,
} from '../../src/families/index.js';
import { pushKindOf } from '../../src/portal/pushKind.js';

const familyOfType = (type: string) => EVENT_KEYS.find((family) => family.owns(type));
const SETTINGS = {
  salesOrder: { portalOrderUrl: undefined },
  customerReturn: { warrantyReturnReasons: undefined },
};
const MAIL_KINDS = mailKinds(SETTINGS);
const mailKindOf = (kind: string | undefined) => MAIL_KINDS.find((family) => family.kind === kind);

const MIGRATIONS = new URL('../../db/migrations/', import.meta.url);

/** The values the latest migration that checks `<table>.kind` allows. */
function allowedKinds(table: string): string[] {
  const pattern = new RegExp(
    `alter table ${table}\\s+add column kind [^;]*?check \\(kind in \\(([^)]*)\\)\\)`,
  );
  const files = readdirSync(MIGRATIONS)
    .filter((name) => name.endsWith('.sql'))
    .sort();
  const checks = files.flatMap((name) => {
    const match = pattern.exec(readFileSync(new URL(name, MIGRATIONS), 'utf8'));
    return match?.[1] === undefined ? [] : [match[1]];
  });
  const last = checks.at(-1) ?? '';
  return [...last.matchAll(/'([^']+)'/g)].map((match) => match[1] as string).sort();
}

describe('the event families', () => {
  it('finds the family of each handled type and none for other types', () => {
    expect(familyOfType('sap.s4.beh.salesorder.v1.SalesOrder.Changed.v1')?.name).toBe('salesOrder');
    expect(familyOfType('sap.s4.beh.customerreturn.v1.CustomerReturn.ItemChanged.v1')?.name).toBe(
      'customerReturn',
    );
    expect(familyOfType('sap.s4.beh.outbounddelivery.v1.OutboundDelivery.Created.v1')).toBeUndefined();
  });

  it('gives each family its own name, metric label, type prefix, mail kind and push kind', () => {
    for (const property of ['name', 'label', 'logKey', 'spanKey'] as const) {
      const values = FAMILIES.map((family) => family[property]);
      expect(new Set(values).size, property).toBe(FAMILIES.length);
    }
    expect(new Set(FAMILIES.map((family) => family.mail(SETTINGS).kind)).size).toBe(FAMILIES.length);
    expect(new Set(FAMILIES.map((family) => family.push.kind)).size).toBe(FAMILIES.length);
    expect(FAMILIES.map((family) => family.label)).toEqual(['sales_order', 'customer_return']);
    const owners = (type: string) => FAMILIES.filter((family) => family.owns(type)).length;
    expect(owners('sap.s4.beh.salesorder.v1.SalesOrder.Created.v1')).toBe(1);
    expect(owners('sap.s4.beh.customerreturn.v1.CustomerReturn.Created.v1')).toBe(1);
  });

  it('renders and pushes exactly the kinds the outbox tables allow', () => {
    expect(FAMILIES.map((family) => family.mail(SETTINGS).kind).sort()).toEqual(allowedKinds('mail_outbox'));
    expect(FAMILIES.map((family) => family.push.kind).sort()).toEqual(allowedKinds('portal_push'));
    for (const family of FAMILIES) {
      expect(mailKindOf(family.mail(SETTINGS).kind)).toMatchObject({
        kind: family.mail(SETTINGS).kind,
        logKey: family.logKey,
      });
      expect(pushKindOf(PUSH_KINDS, family.push.kind)).toMatchObject({ kind: family.push.kind });
      expect(keysNamed(EVENT_KEYS, family.name)).toBe(family);
    }
  });

  it('finds no family for a row without a kind or an event without a family: none is taken for another', () => {
    expect(mailKindOf(undefined)).toBeUndefined();
    expect(pushKindOf(PUSH_KINDS, undefined)).toBeUndefined();
    expect(keysNamed(EVENT_KEYS, undefined)).toBeUndefined();
  });

  it("hands every port each family's part, in the registry's order", () => {
    expect(MAIL_KINDS.map((family) => family.logKey)).toEqual(FAMILIES.map((family) => family.logKey));
    expect(PUSH_KINDS.map((family) => family.kind)).toEqual(FAMILIES.map((family) => family.push.kind));
    expect(FAMILY_ADMINS).toEqual(FAMILIES.map((family) => family.admin));
    expect(FAMILY_EXPIRIES.map((expiry) => expiry.target)).toEqual(['caseTombstones']);
    const pages = FAMILY_ADMINS.map((admin) => admin.console.page);
    expect(new Set(pages).size).toBe(FAMILIES.length);
  });
});
