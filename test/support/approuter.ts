// What @sap/approuter (a devDependency of the root, the version approuter/package.json deploys) checks of its
// configuration: the JSON schema of xs-app.json that ships in its package, and its own validators, which also
// check what a schema cannot (a route's destination must be one the environment defines).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';

const require = createRequire(import.meta.url);
const SCHEMAS = new URL('../../node_modules/@sap/approuter/lib/configuration/schemas/', import.meta.url);

// Draft-04 `id` annotations, which ajv 8 refuses; the schemas refer to each other by the names the approuter
// registers them under, and within a file by JSON pointer.
const schema = (path: string): object =>
  JSON.parse(readFileSync(new URL(path, SCHEMAS), 'utf8'), (key, value) =>
    key === 'id' && typeof value === 'string' ? undefined : value,
  );

// Formats the approuter defines with its own functions: they apply to objects (ajv checks formats of strings
// only) or to files on disk; the approuter's validator below runs them.
const APPROUTER_FORMATS = [
  'relative-uri',
  'regex',
  'uri',
  'local-file',
  'valid-header-value',
  'headers-rules',
  'route-rules',
  'logout-rules',
  'destinations-rules',
  'services-rules',
  'validateWhitelist',
];

/** The xs-app.json schema of the installed @sap/approuter, compiled with ajv. */
export function xsAppSchema(): ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addSchema(schema('refs/source-schema.json'), 'sourceSchema');
  ajv.addSchema(schema('refs/scopes-schema.json'), 'scopesSchema');
  ajv.addSchema(schema('refs/cors-schema.json'), 'corsSchema');
  ajv.addSchema(schema('refs/host-pattern-schema.json'), 'hostPatternSchema');
  for (const format of APPROUTER_FORMATS) ajv.addFormat(format, true);
  return ajv.compile(schema('xs-app-schema.json'));
}

export interface Destination {
  name: string;
  url: string;
  forwardAuthToken?: boolean;
}

interface Validators {
  validateXsApp(configuration: unknown, destinations: Record<string, Destination>, directory: string): void;
  validateDestinations(destinations: Destination[]): void;
}

/**
 * Runs the approuter's own start-up checks on a configuration and the `destinations` environment variable it
 * would get; throws what the approuter would refuse to start with.
 */
export function approuterAccepts(xsApp: unknown, destinations: Destination[], directory: string): void {
  const validators = require('@sap/approuter/lib/configuration/validators.js') as Validators;
  validators.validateDestinations(destinations);
  // It fills in defaults: a copy, so the caller's object stays as read.
  const configuration = structuredClone(xsApp);
  validators.validateXsApp(
    configuration,
    Object.fromEntries(destinations.map((destination) => [destination.name, destination])),
    directory,
  );
}
