// Where the service's CPU goes: reads a .cpuprofile written by `node --cpu-prof` (npm run bench -- --profile)
// and prints the top frames by self time, and self time summed per package or source area.
// Usage: npx tsx bench/profileSummary.ts <file.cpuprofile | directory> [--top 30]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { table } from './stats.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '30' } },
});

for (const file of profileFiles(positionals)) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const totalMs = [...selfMs.values()].reduce((a, b) => a + b, 0);
  const frames = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, ms] of selfMs) {
    const frame = (byId.get(id) as ProfileNode).callFrame;
    const key = `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
    frames.set(key, (frames.get(key) ?? 0) + ms);
    const area = areaOf(frame);
    areas.set(area, (areas.get(area) ?? 0) + ms);
  }
  const top = Number(values.top);
  const share = (ms: number) => `${((ms / totalMs) * 100).toFixed(1)} %`;
  console.log(`\n${file}: ${Math.round(totalMs)} ms sampled`);
  console.log(
    table(
      ['self time by area', 'ms', 'share'],
      sorted(areas)
        .slice(0, top)
        .map(([area, ms]) => [area, Math.round(ms), share(ms)]),
    ),
  );
  console.log(
    table(
      ['top frames by self time', 'ms', 'share'],
      sorted(frames)
        .slice(0, top)
        .map(([frame, ms]) => [frame, Math.round(ms), share(ms)]),
    ),
  );
}

function profileFiles(paths: string[]): string[] {
  return paths.flatMap((path) =>
    statSync(path).isDirectory()
      ? readdirSync(path)
          .filter((name) => name.endsWith('.cpuprofile'))
          .map((name) => join(path, name))
      : [path],
  );
}

function sorted(map: Map<string, number>): Array<[string, number]> {
  return [...map].sort((a, b) => b[1] - a[1]);
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) return url.slice(modules + 'node_modules/'.length);
  const dist = url.lastIndexOf('/dist/');
  if (dist !== -1) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

/** A package under node_modules, the service's own dist/<folder>, node's internals, or V8's pseudo-frames. */
function areaOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (url === '') return `(${functionName.replace(/[()]/g, '') || 'native'})`;
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1] as string;
  const dist = /\/dist\/([^/]+)\//.exec(url);
  if (dist) return `service: ${dist[1]}`;
  if (url.startsWith('node:')) return `node: ${url.slice(5).split('/')[0]}`;
  return shortUrl(url);
}
