// Binary-mode CloudEvents attributes as every transport hands them to the parser: AMQP application properties
// (`cloudEvents:` or `cloudEvents_` prefix), HTTP `ce-` headers, each named without its prefix.

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
