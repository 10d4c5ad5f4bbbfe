// The measured figures of docs/performance.md, written from one bench run's JSON so that they cannot drift from
// the measurement: `npm run bench:docs [-- bench/results/<run>.json]` (default: the latest run) copies the run to
// bench/results/published.json and replaces the block between the two markers below. The begin marker names the
// JSON the block was made from; the text around it is by hand.
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { headline, report, targetTable } from './report.js';
import { isSideBySide } from './results.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where the published run is kept, relative to the repository's root, as the begin marker names it. */
export const PUBLISHED_NAME = 'bench/results/published.json';
export const PUBLISHED = resolve(ROOT, PUBLISHED_NAME);
export const PERFORMANCE_DOC = resolve(ROOT, 'docs/performance.md');
export const README = resolve(ROOT, 'README.md');
const README_BEGIN =
  '<!-- bench:headline:begin (written by npm run bench:docs from bench/results/published.json) -->';
const README_END = '<!-- bench:headline:end -->';
export const END = '<!-- bench:end -->';
const BEGIN_PATTERN = /<!-- bench:begin \(written by npm run bench:docs from (\S+)\) -->/;

/** The begin marker, naming the JSON file (relative to the repository's root) the block is made from. */
export function beginMarker(source: string): string {
  return `<!-- bench:begin (written by npm run bench:docs from ${source}) -->`;
}

/** The generated block of `doc`, markers included, and the JSON file its begin marker names. */
export function generatedBlock(doc: string): { block: string; source: string } {
  const match = BEGIN_PATTERN.exec(doc);
  const end = doc.indexOf(END);
  if (match === null || end < match.index) throw new Error(`no "${beginMarker('…')}" … "${END}" block`);
  return { block: doc.slice(match.index, end + END.length), source: match[1] as string };
}

/** The generated block of docs/performance.md, markers included; `source` is the JSON it is made from. */
export function performanceSection(results: unknown, source = PUBLISHED_NAME): string {
  const body = isSideBySide(results)
    ? report(results)
    : [
        `No run of the side-by-side benchmark is published yet: ${source} holds a run of the benchmark it ` +
          'replaced, which measured no plain consumer. The targets, to be judged by the first published run:',
        '',
        targetTable({ runs: [] }),
      ].join('\n');
  return [beginMarker(source), '', body, '', END].join('\n');
}

/** The README's generated headline, markers included: what the published run gives (report.ts, headline). */
export function headlineSection(results: unknown): string {
  const body = isSideBySide(results)
    ? headline(results)
    : 'No run of the side-by-side benchmark is published yet.';
  return [README_BEGIN, '', body, '', README_END].join('\n');
}

/** The README's headline block as it stands, markers included. */
export function readmeHeadline(readme: string): string {
  const begin = readme.indexOf(README_BEGIN);
  const end = readme.indexOf(README_END);
  if (begin < 0 || end < begin) throw new Error(`no "${README_BEGIN}" … "${README_END}" block`);
  return readme.slice(begin, end + README_END.length);
}

/** `doc` with its generated block replaced by one made from `results`. */
export function withPerformanceSection(doc: string, results: unknown): string {
  const { block } = generatedBlock(doc);
  const begin = doc.indexOf(block);
  return doc.slice(0, begin) + performanceSection(results) + doc.slice(begin + block.length);
}

function main(file: string): void {
  const source = resolve(file);
  const results: unknown = JSON.parse(readFileSync(source, 'utf8'));
  // The published file may predate the side-by-side benchmark: the block then says so. No other such file.
  if (source !== PUBLISHED) {
    if (!isSideBySide(results)) throw new Error(`${file} is not a run of the side-by-side benchmark`);
    const { serviceOverrides, steadyTraced, smtpPipelining } = results.settings;
    if (serviceOverrides !== undefined || steadyTraced === true || smtpPipelining === false)
      throw new Error(
        `${file} measured a lever alone or traced the steady window: it is not the deployed shape`,
      );
    copyFileSync(source, PUBLISHED);
  }
  writeFileSync(PERFORMANCE_DOC, withPerformanceSection(readFileSync(PERFORMANCE_DOC, 'utf8'), results));
  const readme = readFileSync(README, 'utf8');
  writeFileSync(README, readme.replace(readmeHeadline(readme), headlineSection(results)));
  console.log(`docs/performance.md and the README's headline now show ${file}, kept as ${PUBLISHED_NAME}`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv[2] ?? resolve(ROOT, 'bench/results/latest.json'));
}
