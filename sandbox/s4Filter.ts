// The `$filter` expressions the S/4HANA stand-in evaluates on its collections: comparisons (`eq`, `ne`, `gt`,
// `ge`, `lt`, `le`) of a property with a literal, joined by `and` and `or`, with parentheses. Literals are
// quoted strings ('' escapes a quote), `null`, and times: V2 writes `datetimeoffset'2016-09-02T06:15:47.1257050Z'`,
// V4 the bare `2016-09-02T06:15:47.1257050Z`. A time is compared at all 7 fractional digits, as SAP stores it.
// Keys made of digits compare as SAP's ALPHA conversion stores them (padded with zeros to ten), so '9' < '10'.

export type Literal = { kind: 'text'; value: string } | { kind: 'time'; value: string } | { kind: 'null' };
export type Operator = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';
export type Filter =
  | { kind: 'compare'; property: string; op: Operator; literal: Literal }
  | { kind: 'and' | 'or'; left: Filter; right: Filter };

/** A row as the filter and the ordering see it: a property's value as text (times at 7 digits), or null. */
export type RowValue = (property: string) => string | null;

const TOKEN =
  /\s*(?:(\()|(\))|datetimeoffset'([^']*)'|'((?:[^']|'')*)'|(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,7})?)?Z)|([A-Za-z_][A-Za-z0-9_]*))/y;
const OPERATORS: ReadonlySet<string> = new Set(['eq', 'ne', 'gt', 'ge', 'lt', 'le']);

type Token = { kind: '(' | ')' } | { kind: 'word'; text: string } | { kind: 'literal'; literal: Literal };

function tokenize(text: string, api: 'v2' | 'v4'): Token[] | undefined {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    if (text.slice(at).trim() === '') break;
    TOKEN.lastIndex = at;
    const match = TOKEN.exec(text);
    if (match === null) return undefined;
    at = TOKEN.lastIndex;
    const [, open, close, v2Time, quoted, bareTime, word] = match;
    if (open !== undefined) tokens.push({ kind: '(' });
    else if (close !== undefined) tokens.push({ kind: ')' });
    else if (v2Time !== undefined) {
      // Each version has its own time literal: the other one is a syntax error, as on SAP.
      const time = api === 'v2' ? timeStamp(v2Time) : undefined;
      if (time === undefined) return undefined;
      tokens.push({ kind: 'literal', literal: { kind: 'time', value: time } });
    } else if (quoted !== undefined)
      tokens.push({ kind: 'literal', literal: { kind: 'text', value: quoted.replaceAll("''", "'") } });
    else if (bareTime !== undefined) {
      const time = api === 'v4' ? timeStamp(bareTime) : undefined;
      if (time === undefined) return undefined;
      tokens.push({ kind: 'literal', literal: { kind: 'time', value: time } });
    } else if (word === 'null') tokens.push({ kind: 'literal', literal: { kind: 'null' } });
    else tokens.push({ kind: 'word', text: word as string });
  }
  return tokens;
}

/** The filter, or undefined when the text is not one this stand-in (or SAP) accepts. */
export function parseFilter(text: string, api: 'v2' | 'v4'): Filter | undefined {
  const tokens = tokenize(text, api) ?? [];
  if (tokens.length === 0) return undefined;
  let at = 0;
  const word = (text: string) => {
    const token = tokens[at];
    if (token?.kind === 'word' && token.text === text) {
      at += 1;
      return true;
    }
    return false;
  };
  function expression(): Filter | undefined {
    let left = conjunction();
    while (left !== undefined && word('or')) {
      const right = conjunction();
      left = right === undefined ? undefined : { kind: 'or', left, right };
    }
    return left;
  }
  function conjunction(): Filter | undefined {
    let left = primary();
    while (left !== undefined && word('and')) {
      const right = primary();
      left = right === undefined ? undefined : { kind: 'and', left, right };
    }
    return left;
  }
  function primary(): Filter | undefined {
    const token = tokens[at];
    if (token?.kind === '(') {
      at += 1;
      const inner = expression();
      if (tokens[at]?.kind !== ')') return undefined;
      at += 1;
      return inner;
    }
    const [property, op, literal] = [tokens[at], tokens[at + 1], tokens[at + 2]];
    if (property?.kind !== 'word' || op?.kind !== 'word' || !OPERATORS.has(op.text)) return undefined;
    if (literal?.kind !== 'literal') return undefined;
    at += 3;
    return { kind: 'compare', property: property.text, op: op.text as Operator, literal: literal.literal };
  }
  const filter = expression();
  return filter !== undefined && at === tokens.length ? filter : undefined;
}

/** Whether the row passes; null passes only `eq null` and `ne` anything else, as in OData. */
export function matches(filter: Filter, row: RowValue): boolean {
  if (filter.kind === 'compare') return compare(filter, row);
  if (filter.kind === 'and') return matches(filter.left, row) && matches(filter.right, row);
  return matches(filter.left, row) || matches(filter.right, row);
}

function compare(filter: Extract<Filter, { kind: 'compare' }>, row: RowValue): boolean {
  const value = row(filter.property);
  const { literal, op } = filter;
  if (value === null || literal.kind === 'null') {
    const equal = value === null && literal.kind === 'null';
    return op === 'eq' ? equal : op === 'ne' ? !equal : false;
  }
  const order = compareValues(value, literal.value);
  switch (op) {
    case 'eq':
      return order === 0;
    case 'ne':
      return order !== 0;
    case 'gt':
      return order > 0;
    case 'ge':
      return order >= 0;
    case 'lt':
      return order < 0;
    default:
      return order <= 0;
  }
}

/** Text order, with keys of digits ordered as SAP stores them (ALPHA conversion: zeros in front, to ten). */
export function compareValues(a: string, b: string): number {
  const alpha = (text: string) => (/^\d{1,10}$/.test(text) ? text.padStart(10, '0') : text);
  const [x, y] = [alpha(a), alpha(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Any ISO instant as SAP's 7-digit UTC stamp, e.g. 2016-09-02T06:15:47.1257050Z; the given digits are kept. */
export function timeStamp(iso: string): string | undefined {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return undefined;
  const fraction = /T\d{2}:\d{2}:\d{2}\.(\d+)/.exec(iso)?.[1] ?? '';
  return `${new Date(ms).toISOString().slice(0, 19)}.${fraction.padEnd(7, '0').slice(0, 7)}Z`;
}
