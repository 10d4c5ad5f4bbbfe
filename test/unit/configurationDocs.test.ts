// docs/configuration.md is the reference of every key: its table, CONFIG_KEYS and .env.example must name the same
// keys, each row with a default and a meaning, so that none of the three can gain or lose a key alone.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from '../../src/config/keys.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

interface KeyRow {
  key: string;
  defaultValue: string;
  meaning: string;
}

/** The rows of the document's table whose first cell is one code-spanned key. */
function documentedKeys(markdown: string): KeyRow[] {
  return [...markdown.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|(.*)\|\s*$/gm)].map((match) => {
    const [defaultValue = '', ...meaning] = (match[2] as string).split(' | ');
    return {
      key: match[1] as string,
      defaultValue: defaultValue.trim(),
      meaning: meaning.join(' | ').trim(),
    };
  });
}

const envExampleKeys = (text: string) => [...text.matchAll(/^([A-Z0-9_]+)=/gm)].map((match) => match[1]);

describe('docs/configuration.md', () => {
  const rows = documentedKeys(read('docs/configuration.md'));
  const keys = rows.map((row) => row.key);

  it('documents each key once', () => {
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((key, i) => keys.indexOf(key) !== i)).toEqual([]);
  });

  it('documents every key of CONFIG_KEYS, and no key the service does not read', () => {
    expect(
      CONFIG_KEYS.filter((key) => !keys.includes(key)),
      'keys missing from the document',
    ).toEqual([]);
    expect(
      keys.filter((key) => !(CONFIG_KEYS as readonly string[]).includes(key)),
      'keys the service does not read',
    ).toEqual([]);
  });

  it('names the same keys as .env.example, in both directions', () => {
    const example = envExampleKeys(read('.env.example'));
    expect(
      example.filter((key) => !keys.includes(key as string)),
      'in .env.example only',
    ).toEqual([]);
    expect(
      keys.filter((key) => !example.includes(key)),
      'in the document only',
    ).toEqual([]);
  });

  it('gives every key a default and a meaning', () => {
    const incomplete = rows
      .filter((row) => row.defaultValue === '' || row.meaning === '')
      .map((row) => row.key);
    expect(incomplete).toEqual([]);
  });

  it('reads a table row as key, default and meaning', () => {
    expect(documentedKeys('| `PORT` | 8080 | HTTP port | and more |\n| not a key | x | y |')).toEqual([
      { key: 'PORT', defaultValue: '8080', meaning: 'HTTP port | and more' },
    ]);
  });
});
