// Every relative link in README.md and docs/*.md must reach a file of the repository and, where it names one, a
// heading of that file, so that moving a section cannot leave a dead link behind.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`)].filter((path) =>
  path.endsWith('.md'),
);

/** Text outside fenced code blocks and inline code, where a link or a heading can be. */
function prose(markdown: string): string {
  return markdown
    .replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '')
    .replace(/`[^`\n]*`/g, (code) => code.replace(/[[\]()]/g, ''));
}

/** GitHub's anchor for a heading: lower case, punctuation dropped except `-` and `_`, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  const withoutFences = markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
  for (const match of withoutFences.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = anchorOf(match[1] as string);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] as string)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe('links between README.md and docs/', () => {
  it('finds the documents and their links', () => {
    expect(DOCS).toContain('README.md');
    expect(DOCS.length).toBeGreaterThan(1);
    expect(relativeLinks('[a](docs/x.md#y) [b](https://example.com) `[c](z.md)`')).toEqual(['docs/x.md#y']);
  });

  it('derives the anchors GitHub gives headings', () => {
    expect(anchorOf('Portal push (HTTP API, with `PORTAL_DESTINATION`)')).toBe(
      'portal-push-http-api-with-portal_destination',
    );
    expect(anchorOf('Sending: order, and delay after a crash')).toBe('sending-order-and-delay-after-a-crash');
    expect(anchorOf('Throttling: 429 and `Retry-After`')).toBe('throttling-429-and-retry-after');
  });

  for (const doc of DOCS) {
    it(`${doc}: every relative link reaches an existing file and heading`, () => {
      const text = readFileSync(join(ROOT, doc), 'utf8');
      const broken: string[] = [];
      for (const link of relativeLinks(text)) {
        const [path = '', anchor] = link.split('#');
        const target = path === '' ? join(ROOT, doc) : join(ROOT, dirname(doc), decodeURI(path));
        if (!existsSync(target) || relative(ROOT, target).startsWith('..')) {
          broken.push(`${link} (no file)`);
          continue;
        }
        if (anchor !== undefined && !anchors(readFileSync(target, 'utf8')).has(anchor)) {
          broken.push(`${link} (no heading)`);
        }
      }
      expect(broken).toEqual([]);
    });
  }

  it('the README stays a front door of at most 200 lines', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(200);
  });

  it('the README links every page of docs/', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const linked = new Set(relativeLinks(readme).map((link) => link.split('#')[0]));
    const unlinked = DOCS.filter((doc) => doc.startsWith('docs/') && !linked.has(doc));
    expect(unlinked).toEqual([]);
  });
});
