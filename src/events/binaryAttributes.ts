// Binary-mode CloudEvents attributes as every transport hands them to the parser: AMQP application properties
// (`cloudEvents:` or `cloudEvents_` prefix), HTTP `ce-` headers, each named without its prefix; and what the
// parser makes of them.
import { type Failure, fail, LONE_SURROGATE, show, typeName } from './reasonText.js';

// The CloudEvents spec: attribute names are lower-case ASCII letters and digits.
const ATTRIBUTE_NAME = /^[a-z0-9]+$/;

export interface CollectedAttributes {
  /** No prototype: an attribute named `__proto__` stays a name, which the parser refuses with its reason. */
  attributes: Record<string, unknown>;
  /** Names given more than once (one attribute under both AMQP prefixes): which one is the identity would depend on the order. */
  repeated: string[];
}

/** Collects (name, value) pairs named without their transport's prefix. */
export function collectAttributes(pairs: Iterable<readonly [string, unknown]>): CollectedAttributes {
  const attributes: Record<string, unknown> = Object.create(null);
  const repeated: string[] = [];
  for (const [name, value] of pairs) {
    if (Object.hasOwn(attributes, name)) repeated.push(name);
    attributes[name] = value;
  }
  return { attributes, repeated };
}

/**
 * Binary-mode attributes as JSON values. AMQP application-properties are simple types only: strings, numbers,
 * booleans, timestamps, binary; maps and lists are not allowed there, and a name must be a CloudEvents name.
 */
export function attributeValues(
  raw: Record<string, unknown>,
): { ok: true; value: Record<string, unknown> } | Failure {
  const value: Record<string, unknown> = {};
  for (const [name, attribute] of Object.entries(raw)) {
    const label = `binary attribute ${show(name)}`;
    if (!ATTRIBUTE_NAME.test(name)) return fail(`${label} is not a CloudEvents attribute name`);
    if (name === 'data') return fail(`${label} is not allowed: in binary mode the body is the data`);
    if (typeof attribute === 'string') {
      if (LONE_SURROGATE.test(attribute)) return fail(`${label} contains an unpaired UTF-16 surrogate`);
      value[name] = attribute;
    } else if (typeof attribute === 'number') {
      if (!Number.isFinite(attribute)) return fail(`${label} is not a finite number`);
      value[name] = attribute;
    } else if (typeof attribute === 'boolean' || attribute === null) {
      value[name] = attribute;
    } else if (typeof attribute === 'bigint') {
      value[name] = attribute.toString();
    } else if (attribute instanceof Date) {
      if (Number.isNaN(attribute.getTime())) return fail(`${label} is an invalid timestamp`);
      value[name] = attribute.toISOString();
    } else if (attribute instanceof Uint8Array) {
      value[name] = Buffer.from(attribute).toString('base64');
    } else if (attribute !== undefined) {
      return fail(
        `${label} must be a string, number, boolean, timestamp or binary, got ${typeName(attribute)}`,
      );
    }
  }
  return { ok: true, value };
}
