// Every property the customer-return reader selects is in the real metadata of both API versions (and in the
// V2 OpenAPI spec), so `$select` cannot fail a request on a release like these; the hand-made fixtures use only
// properties the metadata has, so they keep the real shapes.
import { describe, expect, it } from 'vitest';
import {
  customerReturnV2,
  customerReturnV4,
  HEADER_PROPERTIES,
  V2_ITEM_PROPERTIES,
  V4_ITEM_PROPERTIES,
} from '../../src/families/customerReturn/services.js';
import { returnV2Body, returnV4Body } from '../fixtures/customerReturn.js';
import { REAL as REAL_SAMPLES } from '../support/realSamples.js';
import { edmxProperties, METADATA, type Version } from '../support/returnSamples.js';

const SELECTED: Record<Version, { header: readonly string[]; item: readonly string[] }> = {
  v2: { header: HEADER_PROPERTIES, item: V2_ITEM_PROPERTIES },
  v4: { header: HEADER_PROPERTIES, item: V4_ITEM_PROPERTIES },
};

/** The names in `names` that `properties` lacks. */
const missing = (names: Iterable<string>, properties: Map<string, string>) =>
  [...names].filter((name) => !properties.has(name));

describe('the real customer-return metadata', REAL_SAMPLES.options, () => {
  describe.each(['v2', 'v4'] as const)('the %s metadata', (version) => {
    const { file, header, item } = METADATA[version];

    it('has every header and item property the reader selects', () => {
      expect(missing(SELECTED[version].header, edmxProperties(file, header))).toEqual([]);
      expect(missing(SELECTED[version].item, edmxProperties(file, item))).toEqual([]);
    });

    it('has the entity set, the item navigation and the key the reader uses', () => {
      const text = REAL_SAMPLES.read(`returns/${file}`);
      const service = version === 'v2' ? customerReturnV2 : customerReturnV4;
      const set = service.collectionPath.split('/').pop();
      expect(text).toContain(`<EntitySet Name="${set}" EntityType="`);
      expect(text).toMatch(
        new RegExp(
          `<EntityType Name="${header}"[^>]*><Key><PropertyRef Name="${service.keyProperty}"/></Key>`,
        ),
      );
      const navigation = version === 'v2' ? 'to_Item' : '_Item';
      expect(new RegExp(`<EntityType Name="${header}".*?</EntityType>`, 's').exec(text)?.[0]).toContain(
        `<NavigationProperty Name="${navigation}"`,
      );
    });

    it('types the times the mapping reads as the version writes them', () => {
      const types = edmxProperties(file, header);
      expect(types.get('LastChangeDateTime')).toBe('Edm.DateTimeOffset');
      expect(types.get('CreationDate')).toBe(version === 'v2' ? 'Edm.DateTime' : 'Edm.Date');
    });

    it('has every property of the hand-made fixture', () => {
      const body = version === 'v2' ? returnV2Body().d : returnV4Body();
      const itemsOf = (entity: Record<string, unknown>) =>
        version === 'v2'
          ? (entity.to_Item as { results: Array<Record<string, unknown>> }).results
          : (entity._Item as Array<Record<string, unknown>>);
      const annotation = /^(__metadata|@odata\.)/;
      const headerNames = Object.keys(body).filter((name) => !annotation.test(name) && !/_Item$/.test(name));
      expect(missing(headerNames, edmxProperties(file, header))).toEqual([]);
      for (const entity of itemsOf(body)) {
        const itemNames = Object.keys(entity).filter((name) => !annotation.test(name));
        expect(missing(itemNames, edmxProperties(file, item))).toEqual([]);
      }
    });
  });

  describe('the V2 OpenAPI spec', () => {
    it('lists every header and item property the V2 reader selects', () => {
      const spec = JSON.parse(REAL_SAMPLES.read('returns/customer_return.json')) as {
        components: { schemas: Record<string, { properties: Record<string, unknown> }> };
      };
      const properties = (type: string) =>
        new Map(
          Object.keys(spec.components.schemas[`API_CUSTOMER_RETURN_SRV.${type}`]?.properties ?? {}).map(
            (n) => [n, ''],
          ),
        );
      expect(missing(HEADER_PROPERTIES, properties('A_CustomerReturnType'))).toEqual([]);
      expect(missing(V2_ITEM_PROPERTIES, properties('A_CustomerReturnItemType'))).toEqual([]);
    });
  });
});
