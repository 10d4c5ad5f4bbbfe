// The dashboard and the alert rules shipped in ops/ query only series the service really exports, and the rules
// behave as their unit tests say (promtool, from Debian's prometheus package).
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createTestQueue } from '../support/broker.js';
import { startTestService } from '../support/harness.js';
import { useWorld } from '../support/world.js';

const run = promisify(execFile);
const DASHBOARD = new URL('../../ops/grafana/fleet-order-notifier.json', import.meta.url);
const RULES = new URL('../../ops/prometheus/alerts.yml', import.meta.url);
const RULE_TESTS = new URL('../../ops/prometheus/alerts.test.yml', import.meta.url);
// Series Prometheus makes itself for every scrape target, not the service.
const SCRAPE_SERIES = new Set(['up']);

interface Panel {
  title: string;
  description?: string;
  datasource: { uid: string };
  targets: Array<{ expr: string }>;
}
interface Dashboard {
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string }> };
}

async function promtool(...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run('promtool', args);
    return stdout + stderr;
  } catch (err) {
    const error = err as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
    if (error.code === 'ENOENT')
      throw new Error(
        'promtool is not installed: run bash scripts/ensure-services.sh (Debian package prometheus)',
      );
    throw new Error(`promtool ${args.join(' ')} failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
  }
}

/** Metric names an expression reads; histogram series (`_bucket`, `_count`, `_sum`) name their histogram. */
function metricNames(expr: string): string[] {
  const names = expr.match(/\b(?:fon_[a-z0-9_]+|up)\b(?=\s*[{[)]|\s*$|\s*[=!<>*/+-])/g) ?? [];
  return names.map((name) => name.replace(/_(bucket|count|sum)$/, ''));
}

/** Every name a /metrics text declares with `# TYPE`. */
function exported(text: string): Set<string> {
  return new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1] as string));
}

const world = useWorld();
let metricsText: string;

beforeAll(async () => {
  const queue = await createTestQueue('fon-ops-artifacts');
  const service = await startTestService({
    ...world.endpoints(),
    queueAddress: queue.address,
    // With reconciliation on, so that its metrics are exported too.
    env: { S4_SOURCE: '/default/sap.s4.beh/S4HCLNT100', RECONCILE_INTERVAL: 'off' },
  });
  try {
    metricsText = (await service.app.inject({ method: 'GET', url: '/metrics' })).body;
  } finally {
    await service.stop();
    await queue.delete();
  }
});

describe('Grafana dashboard', () => {
  it('queries only metrics that the service exports on /metrics', async () => {
    const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as Dashboard;
    const available = exported(metricsText);
    const queried = dashboard.panels.flatMap((panel) => panel.targets.flatMap((t) => metricNames(t.expr)));
    expect(queried.length).toBeGreaterThan(10);
    expect(queried.filter((name) => !available.has(name))).toEqual([]);
  });

  it('has a datasource and an instance variable, and every panel a description and the chosen data source', async () => {
    const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as Dashboard;
    expect(dashboard.templating.list.map((v) => [v.name, v.type])).toEqual([
      ['datasource', 'datasource'],
      ['instance', 'query'],
    ]);
    for (const panel of dashboard.panels) {
      expect(panel.description, panel.title).toMatch(/\S/);
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a JavaScript template
      expect(panel.datasource.uid, panel.title).toBe('${datasource}');
      for (const target of panel.targets) expect(target.expr, panel.title).toContain('instance=~"$instance"');
    }
  });
});

describe('Prometheus alert rules', () => {
  it('read only metrics that the service exports, or that Prometheus adds to every scrape', async () => {
    const rules = parse(await readFile(RULES, 'utf8')) as {
      groups: Array<{ rules: Array<{ expr: string }> }>;
    };
    const available = exported(metricsText);
    const queried = rules.groups.flatMap((group) => group.rules.flatMap((rule) => metricNames(rule.expr)));
    expect(queried.length).toBeGreaterThanOrEqual(8);
    expect(queried.filter((name) => !available.has(name) && !SCRAPE_SERIES.has(name))).toEqual([]);
  });

  it('pass promtool check rules', async () => {
    expect(await promtool('check', 'rules', RULES.pathname)).toContain('SUCCESS: 12 rules found');
  });

  it('fire and stay quiet as their unit tests expect (promtool test rules)', async () => {
    expect(await promtool('test', 'rules', RULE_TESTS.pathname)).toContain('SUCCESS');
  });
});
