// A family folder is a template: the same file names for the same roles (docs/development.md, "File map"). The
// service's families have each of them, beside their own extras; the test-only third family, which proves that a
// family costs its folder, has exactly them.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const TEMPLATE = [
  'api.ts',
  'catalogs.ts',
  'effect.ts',
  'email.ts',
  'entity.ts',
  'events.ts',
  'family.ts',
  'index.ts',
  'overview.ts',
  'pushResource.ts',
  'services.ts',
  'state.ts',
  'timeline.ts',
];

const filesOf = (folder: string) =>
  readdirSync(fileURLToPath(new URL(folder, import.meta.url))).filter((name) => name.endsWith('.ts'));

describe('a family folder', () => {
  it.each(['salesOrder', 'customerReturn'])('%s has every file of the template', (family) => {
    expect(TEMPLATE.filter((name) => !filesOf(`../../src/families/${family}/`).includes(name))).toEqual([]);
  });

  it("the test's outbound-delivery family has the template's files and no other", () => {
    expect(filesOf('../support/outboundDelivery/').sort()).toEqual(TEMPLATE);
  });
});
