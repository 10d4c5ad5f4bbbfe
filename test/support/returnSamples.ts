// The real customer-return material in shared/real-samples/returns: the metadata of both API versions, and the
// sandbox's header and item records turned into the answers each version gives. The records are a logger's
// (values as strings, dates as ISO instants, navigation links as URIs, V2's names): each value is written back
// the way the version writes the type its metadata gives the property; what the type lacks is left out.
import { REAL } from './realSamples.js';

export type Version = 'v2' | 'v4';

export const METADATA: Record<Version, { file: string; header: string; item: string }> = {
  v2: {
    file: 'API_CUSTOMER_RETURN_SRV.edmx',
    header: 'A_CustomerReturnType',
    item: 'A_CustomerReturnItemType',
  },
  v4: {
    file: 'sap-s4-CE_CUSTOMERRETURN_0001-v1.edmx',
    header: 'CustomerReturn_Type',
    item: 'CustomerReturnItem_Type',
  },
};

/** Property name → EDM type, of an entity type in a metadata file of returns/. */
export function edmxProperties(file: string, entityType: string): Map<string, string> {
  const text = REAL.read(`returns/${file}`);
  const body = new RegExp(`<EntityType Name="${entityType}"[^>]*>(.*?)</EntityType>`, 's').exec(text)?.[1];
  if (body === undefined) throw new Error(`${file} has no entity type ${entityType}`);
  return new Map(
    [...body.matchAll(/<Property Name="([^"]+)" Type="([^"]+)"/g)].map(([, name, type]) => [
      name as string,
      type as string,
    ]),
  );
}

/** The first record of a logger file in returns/. */
export function sampleRecord(
  file: 'customer-return-header-01-sample.json' | 'customer-return-item-01-sample.json',
) {
  const [first] = (JSON.parse(REAL.read(`returns/${file}`)) as { message: Array<Record<string, string>> })
    .message;
  if (first === undefined) throw new Error(`${file} holds no record`);
  return first;
}

/** The real return with its item, as a single read of `version` answers it, items expanded. */
export function realReturnBody(version: Version): Record<string, unknown> {
  const { file, header, item } = METADATA[version];
  const { Material, ...itemValues } = sampleRecord('customer-return-item-01-sample.json');
  const renamed = version === 'v2' ? { ...itemValues, Material } : { ...itemValues, Product: Material };
  const entity = typed(
    sampleRecord('customer-return-header-01-sample.json'),
    edmxProperties(file, header),
    version,
  );
  const items = [typed(renamed as Record<string, string>, edmxProperties(file, item), version)];
  return version === 'v2' ? { d: { ...entity, to_Item: { results: items } } } : { ...entity, _Item: items };
}

function typed(values: Record<string, string>, types: Map<string, string>, version: Version) {
  const entity: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    const type = types.get(name);
    if (type !== undefined) entity[name] = written(value, type, version);
  }
  return entity;
}

function written(value: string, type: string, version: Version): unknown {
  if (!['Edm.DateTime', 'Edm.DateTimeOffset', 'Edm.Date'].includes(type)) return value;
  if (value === '') return null;
  const ms = Date.parse(value);
  if (version === 'v2') return type === 'Edm.DateTimeOffset' ? `/Date(${ms}+0000)/` : `/Date(${ms})/`;
  return type === 'Edm.Date' ? new Date(ms).toISOString().slice(0, 10) : new Date(ms).toISOString();
}
