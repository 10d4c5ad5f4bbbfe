// Splitting a CloudEvents batch into its events' own bytes: what the array around them must be, and that each
// element comes out exactly as it was written, strings with brackets and commas included.
import { describe, expect, it } from 'vitest';
import { splitBatch } from '../../src/events/cloudEventBatch.js';

function eventsOf(body: string): string[] {
  const result = splitBatch(Buffer.from(body));
  if (!result.ok) throw new Error(`expected events, got: ${result.reason}`);
  return result.events.map((event) => event.toString('utf8'));
}

function reasonOf(body: string | Buffer): string {
  const result = splitBatch(Buffer.isBuffer(body) ? body : Buffer.from(body));
  if (result.ok) throw new Error(`expected a refusal, got ${result.events.length} events`);
  return result.reason;
}

describe('splitBatch', () => {
  it('gives each element as written, whatever its strings, nesting and whitespace', () => {
    const first = '{"id":"a,b]","data":{"list":[1,{"x":"}"}],"q":"\\"]"}}';
    const second = '{"id":"€ \\u00e9"}';
    expect(eventsOf(` \n[ ${first} ,\n\t${second} ] \n`)).toEqual([first, second]);
  });

  it('keeps elements that are JSON but no event, for the event parser to refuse one by one', () => {
    expect(eventsOf('[1, "x", null, [2,3], {"id":"a","id":"b"}]')).toEqual([
      '1',
      '"x"',
      'null',
      '[2,3]',
      '{"id":"a","id":"b"}',
    ]);
  });

  it('takes an empty batch as no events', () => {
    expect(eventsOf('[]')).toEqual([]);
    expect(eventsOf(' [ ] ')).toEqual([]);
  });

  it.each([
    ['{"specversion":"1.0"}', 'a CloudEvents batch must be a JSON array, got a map'],
    ['"[]"', 'a CloudEvents batch must be a JSON array, got a string'],
    ['', 'batch body is not valid JSON (Unexpected end of JSON input)'],
    ['[{"id":"a"},]', expect.stringMatching(/^batch body is not valid JSON \(/)],
    [`${'['.repeat(40)}${']'.repeat(40)}`, 'batch is nested deeper than 33 levels'],
  ])('refuses %j', (body, reason) => {
    expect(reasonOf(body)).toEqual(reason);
  });

  it('refuses a body that is not UTF-8', () => {
    expect(reasonOf(Buffer.from([0x5b, 0xc0, 0xa0, 0x5d]))).toBe('batch body is not valid UTF-8');
  });
});
