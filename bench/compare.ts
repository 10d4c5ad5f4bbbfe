// Two bench runs side by side: each scenario's median ratios to its ceilings and absolute rates, and how far
// the second is from the first. A run is reproducible when its ratios move by less than 10 %.
// Usage: npm run bench:compare -- bench/results/<first>.json bench/results/<second>.json
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { figureOf } from './figures.js';
import type { BenchResults } from './results.js';
import { show, table } from './stats.js';
import { evaluateTargets } from './targets.js';

// Each against the scenario's own bound (figures.ts): a latency-bound scenario's ratio to the database ceiling
// is decided by the ceiling's noise, not by the scenario.
const RATIOS = ['newShareOfBound', 'duplicatesShareOfBound'];
const RATES = ['newPerSecond', 'duplicatesPerSecond'];
export const REPRODUCIBLE = 0.1;

export interface Difference {
  scenario: string;
  key: string;
  first: number;
  second: number;
  /** |second − first| ÷ first. */
  change: number;
}

export function compareRuns(first: BenchResults, second: BenchResults, keys: string[]): Difference[] {
  return first.summary.scenarios.flatMap((a) => {
    const b = second.summary.scenarios.find((s) => s.name === a.name);
    if (b === undefined) return [];
    return keys.flatMap((key) => {
      const x = figureOf(a, key).median;
      const y = figureOf(b, key).median;
      // A figure the scenario does not measure is NaN in memory and null in a results file.
      if (!Number.isFinite(x) || !Number.isFinite(y)) return [];
      return [{ scenario: a.name, key, first: x, second: y, change: Math.abs(y - x) / x }];
    });
  });
}

/**
 * Each target's judged value in both runs (targets.ts): what the README's verdicts rest on. Judged again from the
 * runs, by the targets as they are now, so that two runs compare alike even if a target changed between them.
 */
export function compareTargets(first: BenchResults, second: BenchResults): Difference[] {
  const judged = evaluateTargets(second);
  return evaluateTargets(first).flatMap((a) => {
    const b = judged.find((t) => t.name === a.name);
    if (b === undefined) return [];
    const change = a.value === b.value ? 0 : Math.abs(b.value - a.value) / Math.abs(a.value);
    return [{ scenario: a.name, key: a.goal, first: a.value, second: b.value, change }];
  });
}

function print(title: string, differences: Difference[], header = ['scenario', 'figure']): string {
  return [
    title,
    table(
      [...header, 'first', 'second', 'change'],
      differences.map((d) => [
        d.scenario,
        d.key,
        d.first,
        d.second,
        `${Math.round(d.change * 100)} %${d.change >= REPRODUCIBLE ? ' !' : ''}`,
      ]),
    ),
  ].join('\n');
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [firstFile, secondFile] = process.argv.slice(2);
  if (firstFile === undefined || secondFile === undefined) {
    console.error('usage: npm run bench:compare -- <first.json> <second.json>');
    process.exit(2);
  }
  const [first, second] = [firstFile, secondFile].map(
    (file) => JSON.parse(readFileSync(file, 'utf8')) as BenchResults,
  ) as [BenchResults, BenchResults];
  const ratios = compareRuns(first, second, RATIOS);
  const widest = Math.max(...ratios.map((d) => d.change).filter(Number.isFinite));
  console.log(print('Medians of the per-run ratios to the ceilings', ratios));
  console.log(
    `\n${print('Absolute medians (for comparison: these are expected to move more)', compareRuns(first, second, RATES))}`,
  );
  console.log(`\n${print('Targets, as judged', compareTargets(first, second), ['target', 'goal'])}`);
  console.log(
    `\nLargest change of a ratio: ${show(widest * 100)} % (${widest < REPRODUCIBLE ? 'under' : 'NOT under'} 10 %)`,
  );
}
