// The deployment descriptors as the tools that read them see them: mta.yaml with an extension descriptor applied
// (as `cf deploy -e` does), manifest.yml with a vars file interpolated (as `cf push --vars-file` does), and the
// service instances a security descriptor names.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export type Params = Record<string, unknown>;

export interface MtaRequired {
  name: string;
  parameters?: { config?: Params };
}

export interface Mta {
  '_schema-version': string;
  ID: string;
  version: string;
  modules: {
    name: string;
    type: string;
    'build-parameters': { builder: string; commands: string[]; ignore: string[] };
    parameters: Params;
    properties: Record<string, unknown>;
    'properties-metadata'?: Record<string, { optional?: boolean; overwritable?: boolean }>;
    requires: MtaRequired[];
    provides?: { name: string; properties: Record<string, unknown> }[];
  }[];
  resources: {
    name: string;
    type: string;
    active?: boolean;
    parameters: Params & { config?: Params };
    requires?: { name: string }[];
    'processed-after'?: string[];
  }[];
}

export interface MtaExtension {
  ID: string;
  extends: string;
  modules: { name: string; properties: Record<string, unknown>; requires?: { name: string }[] }[];
  resources: { name: string; active?: boolean; parameters: { config: Params } }[];
}

/** A service binding the way both descriptors can state it: an instance name, with binding parameters or none. */
export interface Binding {
  name: string;
  parameters?: Params;
}

export interface Manifest {
  applications: (Params & {
    name: string;
    services: (string | Binding)[];
    env: Record<string, unknown>;
  })[];
}

const root = new URL('../../', import.meta.url);

export const readRepoFile = (file: string): string => readFileSync(new URL(file, root), 'utf8');

/** What `cf deploy` makes of mta.yaml and one extension descriptor (or none): what runs, what is bound. */
export interface Deployment {
  /** The resources that are created or bound; the others are skipped. */
  active: Set<string>;
  bindings: Binding[];
  env: Record<string, unknown>;
  /** A resource's service parameters: its `path` file under its `config`, which wins key by key. */
  serviceConfig(resource: string): Params;
}

export function deployment(mta: Mta, extension?: MtaExtension): Deployment {
  const [module] = mta.modules;
  if (module === undefined) throw new Error('mta.yaml has no module');
  const extended = (name: string) => extension?.resources.find((resource) => resource.name === name);
  const active = new Set(
    mta.resources
      .filter((resource) => extended(resource.name)?.active ?? resource.active !== false)
      .map((resource) => resource.name),
  );
  return {
    active,
    bindings: module.requires
      .filter((required) => active.has(required.name))
      .map(({ name, parameters }) =>
        parameters?.config === undefined ? { name } : { name, parameters: parameters.config },
      ),
    env: { ...module.properties, ...extension?.modules[0]?.properties },
    serviceConfig: (name) => {
      const resource = mta.resources.find((candidate) => candidate.name === name);
      const path = resource?.parameters.path;
      const file = typeof path === 'string' ? (JSON.parse(readRepoFile(path)) as Params) : {};
      return { ...file, ...resource?.parameters.config, ...extended(name)?.parameters.config };
    },
  };
}

// bosh-cli's director/template (template.go), which the cf CLI evaluates manifests with: `((name))` as a whole
// value is replaced by the variable with its YAML type; inside a longer string only a string or an integer may be
// spliced in; a variable the vars files lack stops the push ("Expected to find variables").
const VARIABLE = /\(\((!?[-.\w\p{L}]+)\)\)/gu;

/** A YAML value with the variables replaced; `used` collects the names it met. */
export function interpolate(node: unknown, vars: Record<string, unknown>, used: Set<string>): unknown {
  if (Array.isArray(node)) return node.map((item) => interpolate(item, vars, used));
  if (node !== null && typeof node === 'object')
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, interpolate(v, vars, used)]));
  if (typeof node !== 'string') return node;
  const lookup = (name: string) => {
    const key = name.replace(/^!/, '');
    used.add(key);
    if (!(key in vars)) throw new Error(`Expected to find variables: ${key}`);
    return vars[key];
  };
  const whole = new RegExp(`^${VARIABLE.source}$`, 'u').exec(node);
  if (whole?.[1] !== undefined) return lookup(whole[1]);
  return node.replace(VARIABLE, (_, name: string) => {
    const value = lookup(name);
    if (typeof value === 'string' || Number.isInteger(value)) return String(value);
    throw new Error(`variable ${name} is spliced into a string but is not a string or an integer`);
  });
}

/**
 * manifest.yml as `cf push --vars-file <varsFile>` reads it, with the deployer's own variables (a second vars file
 * outside the repository) after the file's, and the variables it used.
 */
export function pushedManifest(
  varsFile: string,
  deployerVars: Params = {},
): { manifest: Manifest; vars: Params; used: Set<string> } {
  const vars = { ...(parse(readRepoFile(varsFile)) as Params), ...deployerVars };
  const used = new Set<string>();
  const manifest = interpolate(parse(readRepoFile('manifest.yml')), vars, used) as Manifest;
  return { manifest, vars, used };
}

/** Every service instance that `$XSSERVICENAME(<instance>)` names anywhere in a security descriptor. */
export function instancesNamedIn(value: unknown): string[] {
  return [...JSON.stringify(value).matchAll(/\$XSSERVICENAME\(([^)]+)\)/g)].map((match) => String(match[1]));
}
