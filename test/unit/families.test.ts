// The registry of event families: each CloudEvent type finds at most one family, each outbox kind exactly one,
// and the kinds the families render are the ones the database allows.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FAMILIES, familyNamed, familyOfMail, familyOfPush, familyOfType } from '../../src/families/index.js';

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
    expect(new Set(FAMILIES.map((family) => family.mail.kind)).size).toBe(FAMILIES.length);
    expect(new Set(FAMILIES.map((family) => family.push.kind)).size).toBe(FAMILIES.length);
    expect(FAMILIES.map((family) => family.label)).toEqual(['sales_order', 'customer_return']);
    const owners = (type: string) => FAMILIES.filter((family) => family.owns(type)).length;
    expect(owners('sap.s4.beh.salesorder.v1.SalesOrder.Created.v1')).toBe(1);
    expect(owners('sap.s4.beh.customerreturn.v1.CustomerReturn.Created.v1')).toBe(1);
  });

  it('renders and pushes exactly the kinds the outbox tables allow', () => {
    expect(FAMILIES.map((family) => family.mail.kind).sort()).toEqual(allowedKinds('mail_outbox'));
    expect(FAMILIES.map((family) => family.push.kind).sort()).toEqual(allowedKinds('portal_push'));
    for (const family of FAMILIES) {
      expect(familyOfMail(family.mail.kind)).toBe(family);
      expect(familyOfPush(family.push.kind)).toBe(family);
      expect(familyNamed(family.name)).toBe(family);
    }
  });

  it("takes a row without a kind for an order's, as the column's default says", () => {
    expect(familyOfMail(undefined)?.name).toBe('salesOrder');
    expect(familyOfPush(undefined)?.name).toBe('salesOrder');
    expect(familyNamed(undefined)).toBeUndefined();
  });
});
