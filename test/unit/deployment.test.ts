import { posix } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEPLOYED_NODE_FLAGS } from '../../scripts/startCommand.js';
import { CONFIG_KEYS } from '../../src/config/keys.js';
import { loadConfig } from '../../src/config/loadConfig.js';
import { CUSTOMER_RETURN_TYPES } from '../../src/families/customerReturn/events.js';
import { EVENT_HUB_PATH } from '../../src/http/eventHubRoutes.js';
import { SCOPES } from '../../src/http/scopes.js';
import { approuterAccepts, type Destination, xsAppSchema } from '../support/approuter.js';
import {
  type Binding,
  deployment,
  instancesNamedIn,
  interpolate,
  type Mta,
  type MtaExtension,
  type Params,
  pushedManifest,
  readRepoFile as read,
} from '../support/descriptors.js';
import { HAND_MADE, REAL, type SampleSource } from '../support/realSamples.js';

// The deployment descriptors are checked against each other and against the code, so that mta.yaml with a broker's
// extension descriptor and manifest.yml with that broker's vars file cannot drift apart, and neither can name a
// scope, a setting, a start file or a service instance that is not there.

interface XsSecurity {
  xsappname: string;
  'tenant-mode': string;
  scopes: { name: string; 'grant-as-authority-to-apps'?: string[] }[];
  authorities?: string[];
  'oauth2-configuration'?: { 'credential-types'?: string[] };
  'role-templates': { name: string; 'scope-references': string[] }[];
  'role-collections': { name: string; 'role-template-references': string[] }[];
}
interface EventMeshDescriptor {
  emname: string;
  namespace: string;
  version: string;
  options: Record<string, boolean>;
  rules: Record<'queueRules' | 'topicRules', Record<'publishFilter' | 'subscribeFilter', string[]>>;
}

// What the deployer gives outside the repository: MAIL_FROM and MAIL_TO in secrets.mtaext for cf deploy, mail_from
// and mail_to in mail.yml for cf push. The descriptors themselves carry no address.
const ADDRESSES = { MAIL_FROM: 'notifier@fleet.example', MAIL_TO: 'fleet-manager@fleet.example' };
const MAIL_VARS = { mail_from: ADDRESSES.MAIL_FROM, mail_to: ADDRESSES.MAIL_TO };

const mta = parse(read('mta.yaml')) as Mta;
const eventHubExtension = parse(read('event-hub.mtaext')) as MtaExtension;
// manifest.yml as pushed for standalone Event Mesh, the broker mta.yaml binds without an extension.
const { manifest } = pushedManifest('deploy/cf/event-mesh.yml', MAIL_VARS);
const xsSecurity = JSON.parse(read('xs-security.json')) as XsSecurity;
const eventMesh = JSON.parse(read('event-mesh.json')) as EventMeshDescriptor;
const pkg = JSON.parse(read('package.json')) as {
  version: string;
  main: string;
  scripts: Record<string, string>;
  engines: { node: string };
};

const [mtaModule, ...otherModules] = mta.modules;
const [app, ...otherApps] = manifest.applications;
if (mtaModule === undefined || app === undefined)
  throw new Error('mta.yaml and manifest.yml each need one app');
const mtaParams = mtaModule.parameters;

const INSTANCES: Record<string, string> = {
  xsuaa: 'fon-uaa',
  'enterprise-messaging': 'fon-event-mesh',
  destination: 'fon-destination',
  'postgresql-db': 'fon-db',
};
// Declared inactive in mta.yaml; an extension descriptor per broker activates them.
const OPTIONAL_INSTANCES: Record<string, string> = { 'event-broker': 'fon-event-hub', identity: 'fon-ias' };
// The AMQP brokers other than the default standalone Event Mesh, inactive in mta.yaml as well: AEM is a
// user-provided service that exists before the deploy, so it has no service label of its own here.
const BROKER_INSTANCES = ['fon-emis', 'fon-aem'];
const activeResources = mta.resources.filter((resource) => resource.active !== false);
const instanceOf = (label: string): string => {
  const resource = mta.resources.find((candidate) => candidate.parameters.service === label);
  return String(resource?.parameters['service-name'] ?? resource?.name);
};

const APPROUTER = 'fleet-order-notifier-approuter';

const NAMESPACE = '$' + '{namespace}'; // the descriptor's own placeholder, not a template literal

/** Whether an Event Mesh rule (`+` = one segment, trailing `*` = any rest) admits every name `name` can match. */
function covers(rule: string, name: string): boolean {
  const ruleParts = rule.replace(NAMESPACE, eventMesh.namespace).split('/');
  const nameParts = name.split('/');
  for (const [index, part] of ruleParts.entries()) {
    if (part === '*' && index === ruleParts.length - 1) return true;
    const candidate = nameParts[index];
    if (candidate === undefined) return false;
    if (part === '+' ? candidate === '*' : part !== candidate) return false;
  }
  return ruleParts.length === nameParts.length;
}

type SchemaName = 'mtaext' | 'cloudfoundry-application-manifest';
const compiled = new Map<string, ValidateFunction>();

/** A descriptor schema of the source's schemas/ folder, compiled once; SchemaStore's mtaext.json refers to mtad.json. */
function schemaOf(source: SampleSource, name: SchemaName): ValidateFunction {
  const key = `${source.origin}/${name}`;
  const known = compiled.get(key);
  if (known !== undefined) return known;
  const ajv = new Ajv({ strict: false, allErrors: true });
  if (source === REAL && name === 'mtaext') ajv.addSchema(JSON.parse(source.read('schemas/mtad.json')));
  const validate = ajv.compile(JSON.parse(source.read(`schemas/${name}.json`)));
  compiled.set(key, validate);
  return validate;
}

/**
 * One test per schema: the hand-made one of what this product relies on, which a plain clone has, and
 * SchemaStore's, which the real samples bring.
 */
function itIsValidUnder(name: SchemaName, what: string, descriptor: () => unknown): void {
  for (const source of [HAND_MADE, REAL]) {
    const schema = source === REAL ? "SchemaStore's schema" : 'the hand-made schema';
    it(`is a valid ${what} under ${schema}`, source.options, () => {
      const validate = schemaOf(source, name);
      expect(validate(descriptor()), JSON.stringify(validate.errors)).toBe(true);
    });
  }
}

/** Enough of semver for an engines field: `||` of `^x.y.z`, `>=x.y.z` or `x.y.z`. */
function satisfies(range: string, version: string): boolean {
  const have = version.split('.').map(Number);
  const compare = (want: number[]) => {
    for (const [index, part] of want.entries()) {
      const diff = (have[index] ?? 0) - part;
      if (diff !== 0) return Math.sign(diff);
    }
    return 0;
  };
  return range.split('||').some((alternative) => {
    const match = /^\s*(\^|>=)?(\d+)\.(\d+)\.(\d+)\s*$/.exec(alternative);
    if (match === null) throw new Error(`unsupported engines range "${alternative}"`);
    const want = match.slice(2).map(Number);
    if (match[1] === '>=') return compare(want) >= 0;
    if (match[1] === '^') return compare(want) >= 0 && have[0] === want[0];
    return compare(want) === 0;
  });
}

describe('mta.yaml and manifest.yml', () => {
  it('describe one app with the same name', () => {
    // The approuter is an application of its own (see 'the approuter' below).
    expect(otherModules.map((module) => module.name)).toEqual([APPROUTER]);
    expect(otherApps).toEqual([]);
    expect(mta['_schema-version']).toBe('3.1');
    expect(mtaModule.name).toBe('fleet-order-notifier');
    expect(app.name).toBe(mtaModule.name);
    expect(mta.version).toBe(pkg.version);
  });

  it('leave MAIL_FROM and MAIL_TO to the deployer: without a value in mta.yaml, required and overwritable', () => {
    expect(mtaModule.properties).toMatchObject({ MAIL_FROM: null, MAIL_TO: null });
    expect(mtaModule['properties-metadata']).toEqual({
      MAIL_FROM: { optional: false, overwritable: true },
      MAIL_TO: { optional: false, overwritable: true },
    });
  });

  it('carry no email address, nor does any extension descriptor or vars file', () => {
    const files = [
      'mta.yaml',
      'manifest.yml',
      ...VARIANTS.flatMap(({ extension, vars }) => [extension, vars]),
    ];
    for (const file of files)
      expect(JSON.stringify(parse(read(file))), file).not.toMatch(/[\w.+-]+@[\w-]+(\.[\w-]+)+/);
  });

  it('bind the same four services, and mta.yaml keeps the optional ones inactive', () => {
    expect(activeResources.map((resource) => resource.parameters.service).sort()).toEqual(
      Object.keys(INSTANCES).sort(),
    );
    const inactive = mta.resources.filter((resource) => resource.active === false);
    expect(
      inactive
        .filter((resource) => !BROKER_INSTANCES.includes(resource.name))
        .map((resource) => resource.parameters.service),
    ).toEqual(Object.keys(OPTIONAL_INSTANCES));
    expect(
      inactive.filter((resource) => BROKER_INSTANCES.includes(resource.name)).map((r) => r.name),
    ).toEqual(BROKER_INSTANCES);
    for (const [label, instance] of Object.entries(OPTIONAL_INSTANCES))
      expect(instanceOf(label)).toBe(instance);
    for (const [label, instance] of Object.entries(INSTANCES)) expect(instanceOf(label)).toBe(instance);
    expect(
      mta.resources
        .filter((resource) => resource.type !== 'org.cloudfoundry.managed-service')
        .map((resource) => [resource.name, resource.type]),
    ).toEqual([['fon-aem', 'org.cloudfoundry.existing-service']]);
    expect(mtaModule.requires.map((required) => required.name).sort()).toEqual(
      mta.resources.map((resource) => resource.name).sort(),
    );
    expect([...app.services].sort()).toEqual(Object.values(INSTANCES).sort());
  });

  it('start the same command, the file that package.json names, under a heap ceiling that fits the quota', () => {
    expect(mtaParams.command).toBe(app.command);
    expect(app.command).toBe(pkg.scripts.start);
    const [, heapMb, semiMb, file] =
      /^node --max-old-space-size=(\d+) --max-semi-space-size=(\d+) (\S+)$/.exec(String(app.command)) ?? [];
    expect(file).toBe(pkg.main);
    // The old generation is most of the process, not all of it: code, buffers and the young generation need
    // the rest of the quota.
    expect(Number(heapMb)).toBeLessThanOrEqual(0.65 * Number.parseInt(String(mtaParams.memory), 10));
    // V8 starts a full collection whenever the old generation's room falls below the young generation's size,
    // so a young generation grown to a large share of the ceiling makes nearly every collection a full one.
    expect(2 * Number(semiMb)).toBeLessThanOrEqual(0.2 * Number(heapMb));
    // The benchmark's peak RSS is the deployment's only under the same ceiling.
    expect(DEPLOYED_NODE_FLAGS).toEqual([
      `--max-old-space-size=${heapMb}`,
      `--max-semi-space-size=${semiMb}`,
    ]);
  });

  it('use the same health check, memory, disk, instances and buildpack', () => {
    expect(mtaParams['health-check-type']).toBe('http');
    expect(app['health-check-type']).toBe('http');
    expect(mtaParams['health-check-http-endpoint']).toBe('/health');
    expect(app['health-check-http-endpoint']).toBe('/health');
    expect(mtaParams['health-check-timeout']).toBe(app.timeout);
    expect(mtaParams.memory).toBe('256M');
    expect(app.memory).toBe(mtaParams.memory);
    expect(app.disk_quota).toBe(mtaParams['disk-quota']);
    expect(app.instances).toBe(mtaParams.instances);
    expect(mtaParams.buildpacks).toEqual(['nodejs_buildpack']);
    expect(app.buildpacks).toEqual(mtaParams.buildpacks);
  });

  it('set the same environment, only keys the code reads, every value a string, no secret', () => {
    expect(app.env).toEqual({ ...mtaModule.properties, ...ADDRESSES });
    for (const [key, value] of Object.entries(app.env)) {
      expect(CONFIG_KEYS, `${key} is not read by the code`).toContain(key);
      expect(typeof value, `${key} must be quoted so YAML does not turn it into a number`).toBe('string');
    }
    expect(Object.keys(app.env)).not.toContain('SMTP_URL');
    expect(Object.keys(app.env)).not.toContain('NODE_ENV');
  });

  it('build with npm ci and the build script, and leave node_modules to staging', () => {
    const build = mtaModule['build-parameters'];
    expect(build.builder).toBe('custom');
    expect(build.commands).toEqual(['npm ci', 'npm run build']);
    expect(pkg.scripts.build).toBeDefined();
    expect(build.ignore).toContain('node_modules/');
    // The start file and the migrations it applies must stay in the archive.
    expect(build.ignore.filter((pattern) => /^(\.\/)?(dist|db|package)/.test(pattern))).toEqual([]);
  });

  it('point the build output at the file the command starts', () => {
    // tsc puts src/main.ts at <outDir>/<path relative to rootDir>; a mismatch only shows at the first start.
    const buildConfig = JSON.parse(read('tsconfig.build.json')) as {
      compilerOptions?: Record<string, string>;
    };
    const baseConfig = JSON.parse(read('tsconfig.json')) as { compilerOptions?: Record<string, string> };
    const options = { ...baseConfig.compilerOptions, ...buildConfig.compilerOptions };
    expect(
      options.rootDir,
      'set rootDir so the output layout does not depend on which files exist',
    ).toBeDefined();
    const emitted = posix.join(options.outDir ?? '.', posix.relative(options.rootDir ?? '.', 'src/main.ts'));
    expect(emitted.replace(/\.ts$/, '.js')).toBe(posix.normalize(pkg.main));
  });

  it('give the service descriptors as config files', () => {
    const uaa = mta.resources.find((resource) => resource.parameters.service === 'xsuaa');
    const mesh = mta.resources.find((resource) => resource.parameters.service === 'enterprise-messaging');
    expect(uaa?.parameters['service-plan']).toBe('application');
    expect(uaa?.parameters.path).toBe('./xs-security.json');
    expect(mesh?.parameters['service-plan']).toBe('default');
    expect(mesh?.parameters.path).toBe('./event-mesh.json');
  });
});

describe('xs-security.json', () => {
  const scopeNames = xsSecurity.scopes.map((scope) => scope.name);
  const templateNames = xsSecurity['role-templates'].map((template) => `$XSAPPNAME.${template.name}`);

  it('declares every scope the code checks', () => {
    expect(xsSecurity.xsappname).toBe('fleet-order-notifier');
    expect(xsSecurity['tenant-mode']).toBe('dedicated');
    for (const scope of Object.values(SCOPES)) expect(scopeNames).toContain(`$XSAPPNAME.${scope}`);
  });

  it('references only existing scopes and role templates', () => {
    for (const template of xsSecurity['role-templates']) {
      for (const scope of template['scope-references']) expect(scopeNames).toContain(scope);
    }
    for (const collection of xsSecurity['role-collections']) {
      for (const template of collection['role-template-references'])
        expect(templateNames).toContain(template);
    }
  });

  it('offers a viewer and an admin role collection, and only the admin may act', () => {
    const scopesOf = (collectionName: string) => {
      const collection = xsSecurity['role-collections'].find(
        (candidate) => candidate.name === collectionName,
      );
      return (collection?.['role-template-references'] ?? []).flatMap(
        (reference) =>
          xsSecurity['role-templates'].find((template) => `$XSAPPNAME.${template.name}` === reference)?.[
            'scope-references'
          ] ?? [],
      );
    };
    expect(scopesOf('FleetNotifierViewer')).toEqual([`$XSAPPNAME.${SCOPES.viewer}`]);
    expect(scopesOf('FleetNotifierAdmin').sort()).toEqual(
      [`$XSAPPNAME.${SCOPES.viewer}`, `$XSAPPNAME.${SCOPES.admin}`].sort(),
    );
  });

  it("gives EventSubmit to the app's own client, whose service keys have secrets of their own", () => {
    // A webhook subscription of any broker fetches its token with a service key of this instance; no broker
    // instance is named, so the descriptor is the same whichever broker is deployed.
    expect(xsSecurity.authorities).toEqual([`$XSAPPNAME.${SCOPES.eventSubmit}`]);
    for (const scope of xsSecurity.scopes) expect(scope['grant-as-authority-to-apps']).toBeUndefined();
    // Deleting the webhook's key revokes its secret without touching the app's binding.
    expect(xsSecurity['oauth2-configuration']?.['credential-types']).toContain('binding-secret');
  });
});

describe('event-mesh.json', () => {
  const env = app.env as Record<string, string>;
  const queue = String(env.AMQP_QUEUE).replace(/^queue:/, '');
  const topics = String(env.EVENT_MESH_TOPICS)
    .split(',')
    .map((topic) => topic.trim());

  it('names the bound instance, in descriptor version 1.1.0 with all three channels', () => {
    expect(eventMesh.emname).toBe(instanceOf('enterprise-messaging'));
    expect(eventMesh.version).toBe('1.1.0');
    expect(eventMesh.options).toEqual({ management: true, messagingrest: true, messaging: true });
  });

  it('has a namespace of exactly three segments and at most 24 characters', () => {
    expect(eventMesh.namespace.length).toBeLessThanOrEqual(24);
    expect(eventMesh.namespace).toMatch(
      /^[a-zA-Z0-9]+\/[a-zA-Z0-9][a-zA-Z0-9.-]*\/[a-zA-Z0-9][a-zA-Z0-9.-]*$/,
    );
  });

  it('lets the service use its own queue, which lives in the namespace', () => {
    expect(env.AMQP_QUEUE).toMatch(/^queue:/);
    expect(queue.startsWith(`${eventMesh.namespace}/`)).toBe(true);
    const { publishFilter, subscribeFilter } = eventMesh.rules.queueRules;
    expect(subscribeFilter.some((rule) => covers(rule, queue))).toBe(true);
    expect(publishFilter.some((rule) => covers(rule, queue))).toBe(true);
  });

  it('lets the queue subscribe to every configured S/4HANA topic', () => {
    expect(topics.length).toBeGreaterThan(0);
    for (const topic of topics) {
      expect(topic).toMatch(
        /\/ce\/sap\/s4\/beh\/(salesorder\/v1\/SalesOrder|customerreturn\/v1\/CustomerReturn)\/[A-Za-z]+\/v1$/,
      );
      expect(
        eventMesh.rules.topicRules.subscribeFilter.some((rule) => covers(rule, topic)),
        `no topic rule covers ${topic}`,
      ).toBe(true);
    }
  });

  it('subscribes the queue to every customer-return event type the service handles, and to no other', () => {
    const returnTopics = topics.filter((topic) => topic.includes('/customerreturn/'));
    expect(returnTopics.sort()).toEqual(
      CUSTOMER_RETURN_TYPES.map((type) => `sap/S4HANAOD/+/ce/${type.replaceAll('.', '/')}`).sort(),
    );
  });

  it('rules match as documented: + is one segment, a trailing * any rest', () => {
    expect(covers('sap/S4HANAOD/*', 'sap/S4HANAOD/+/ce/sap/s4/beh/x')).toBe(true);
    expect(covers('sap/S4HANAOD/*', 'sap/S4HANAOD2/E4X/ce')).toBe(false);
    expect(covers('+/+/+/ce/*', 'sap/S4HANAOD/E4X/ce/sap')).toBe(true);
    expect(covers('sap/S4HANAOD/E4X/*', 'sap/S4HANAOD/+/ce')).toBe(false);
    expect(covers(`${NAMESPACE}/*`, `${eventMesh.namespace}/salesorder`)).toBe(true);
  });
});

describe('event-hub.mtaext', () => {
  const [extModule, ...otherExtModules] = eventHubExtension.modules;
  const resource = (name: string) => eventHubExtension.resources.find((candidate) => candidate.name === name);
  const eventHubResource = mta.resources.find((candidate) => candidate.name === 'fon-event-hub');

  itIsValidUnder('mtaext', 'MTA extension descriptor', () => eventHubExtension);

  it('extends this MTA', () => {
    expect(eventHubExtension.extends).toBe(mta.ID);
    // An extension can only change what the MTA declares: every name must be there already.
    expect(otherExtModules).toEqual([]);
    expect(extModule?.name).toBe(mtaModule.name);
    for (const required of extModule?.requires ?? [])
      expect(mtaModule.requires.map((candidate) => candidate.name)).toContain(required.name);
    for (const { name } of eventHubExtension.resources)
      expect(mta.resources.map((candidate) => candidate.name)).toContain(name);
  });

  it('activates exactly the Event Hub and IAS instances, the IAS one after Event Hub', () => {
    expect(eventHubExtension.resources.map(({ name, active }) => ({ name, active }))).toEqual(
      Object.values(OPTIONAL_INSTANCES).map((name) => ({ name, active: true })),
    );
    const ias = mta.resources.find((candidate) => candidate.name === instanceOf('identity'));
    expect(ias?.parameters['service-plan']).toBe('application');
    expect(ias?.['processed-after']).toEqual([instanceOf('event-broker')]);
    expect(eventHubResource?.parameters['service-plan']).toBe('event-connectivity');
  });

  it("registers the service's Event Hub endpoint as the webhook URL, on the app's own URL", () => {
    const provided = (mtaModule as { provides?: { name: string; properties: Params }[] }).provides ?? [];
    const api = provided.find((candidate) => candidate.properties.url === '$' + '{default-url}');
    expect(api).toBeDefined();
    expect(eventHubResource?.requires?.map((required) => required.name)).toContain(api?.name);
    const config = resource('fon-event-hub')?.parameters.config;
    expect(config?.webhookUrl).toBe(`~{${api?.name}/url}${EVENT_HUB_PATH}`);
    expect(String(config?.systemNamespace).length).toBeLessThanOrEqual(15);
  });

  it('lets the Event Hub instance consume the IAS application, and binds both with certificates', () => {
    expect(resource('fon-ias')?.parameters.config['consumed-services']).toEqual([
      { 'service-instance-name': instanceOf('event-broker') },
    ]);
    const requires = mtaModule.requires as { name: string; parameters?: { config: Params } }[];
    const binding = (name: string) => requires.find((required) => required.name === name)?.parameters;
    expect(binding('fon-ias')?.config['credential-type']).toBe('X509_GENERATED');
    expect(binding('fon-event-hub')?.config['authentication-type']).toBe('X509_IAS');
  });

  it('sets only keys the code reads, and an INGEST the configuration takes with Event Hub bound', () => {
    const properties = extModule?.properties ?? {};
    for (const [key, value] of Object.entries(properties)) {
      expect(CONFIG_KEYS, `${key} is not read by the code`).toContain(key);
      expect(typeof value).toBe('string');
    }
    const bindings = {
      identity: [
        {
          label: 'identity',
          credentials: { clientid: 'c', url: 'https://t.example', domains: ['t.example'] },
        },
      ],
      'event-broker': [{ label: 'event-broker', credentials: { ias: { clientId: 'eh' } } }],
    };
    const config = loadConfig({
      ...(mtaModule.properties as Record<string, string>),
      ...(properties as Record<string, string>),
      ...ADDRESSES,
      DATABASE_URL: 'postgres://u:p@db/x',
      SMTP_URL: 'smtp://mail',
      AUTH: 'none',
      VCAP_SERVICES: JSON.stringify(bindings),
    });
    expect(config.ingest).toContain('event-hub');
    expect(config.eventHub?.eventHubClientId).toBe('eh');
  });
});

describe('package.json engines', () => {
  it('accepts the LTS lines the Node.js buildpack offers, 22 from 22.12 and 24, and the runtime these tests run on', () => {
    expect(satisfies(pkg.engines.node, '22.12.0')).toBe(true);
    expect(satisfies(pkg.engines.node, '24.0.0')).toBe(true);
    expect(satisfies(pkg.engines.node, process.versions.node)).toBe(true);
  });

  it('refuses Node 20, whose life has ended, an older Node 22 and the odd line 25', () => {
    expect(satisfies(pkg.engines.node, '20.19.0')).toBe(false);
    expect(satisfies(pkg.engines.node, '22.11.0')).toBe(false);
    expect(satisfies(pkg.engines.node, '25.0.0')).toBe(false);
  });
});

describe('one extension descriptor per AMQP broker', () => {
  const BROKERS = ['fon-event-mesh', ...BROKER_INSTANCES];
  // What each broker's binding looks like in VCAP_SERVICES, enough for loadConfig.
  const oa2 = { clientid: 'c', clientsecret: 's', tokenendpoint: 'https://uaa.example/oauth/token' };
  const meshBinding = (label: string) => ({
    [label]: [
      { label, credentials: { messaging: [{ protocol: ['amqp10ws'], uri: 'wss://m.example', oa2 }] } },
    ],
  });
  const cases = [
    {
      file: 'event-mesh.mtaext',
      active: 'fon-event-mesh',
      // EVENT_MESH_SETUP=true also reads the management entry.
      bindings: {
        'enterprise-messaging': [
          {
            label: 'enterprise-messaging',
            credentials: {
              messaging: [{ protocol: ['amqp10ws'], uri: 'wss://m.example', oa2 }],
              management: [{ uri: 'https://mgmt.example', oa2 }],
            },
          },
        ],
      },
      broker: 'eventMesh',
    },
    {
      file: 'emis.mtaext',
      active: 'fon-emis',
      bindings: meshBinding('event-mesh-message-client'),
      broker: 'eventMesh',
    },
    {
      file: 'aem.mtaext',
      active: 'fon-aem',
      bindings: {
        'user-provided': [
          {
            label: 'user-provided',
            tags: ['amqp'],
            credentials: { uri: 'amqps://aem.example:5671', username: 'u', password: 'p' },
          },
        ],
      },
      broker: 'plain',
    },
  ];

  for (const { file, active, bindings, broker } of cases) {
    describe(file, () => {
      const extension = parse(read(file)) as MtaExtension;
      const [extModule, ...otherExtModules] = extension.modules;

      itIsValidUnder('mtaext', 'MTA extension descriptor', () => extension);

      it('extends this MTA and names only what mta.yaml declares', () => {
        expect(extension.extends).toBe(mta.ID);
        expect(otherExtModules).toEqual([]);
        expect(extModule?.name).toBe(mtaModule.name);
        for (const { name } of extension.resources)
          expect(mta.resources.map((candidate) => candidate.name)).toContain(name);
      });

      it(`activates ${active} and no other broker`, () => {
        expect(extension.resources.map(({ name, active: on }) => ({ name, active: on }))).toEqual(
          BROKERS.map((name) => ({ name, active: name === active })),
        );
        expect(mtaModule.requires.map((required) => required.name)).toContain(active);
      });

      it(`sets only keys the code reads, and the configuration then finds the ${broker} broker in the binding`, () => {
        const properties = (extModule?.properties ?? {}) as Record<string, string>;
        for (const [key, value] of Object.entries(properties)) {
          expect(CONFIG_KEYS, `${key} is not read by the code`).toContain(key);
          expect(typeof value).toBe('string');
        }
        const config = loadConfig({
          ...(mtaModule.properties as Record<string, string>),
          ...properties,
          ...ADDRESSES,
          DATABASE_URL: 'postgres://u:p@db/x',
          SMTP_URL: 'smtp://mail',
          AUTH: 'none',
          VCAP_SERVICES: JSON.stringify(bindings),
        });
        expect(config.amqp?.broker.kind).toBe(broker);
        expect(config.amqp?.queue).toBe(properties.AMQP_QUEUE);
      });
    });
  }
});

// Each broker has one extension descriptor for `cf deploy` and one vars file for `cf push`; both must end in the
// same app. mta.yaml alone deploys standalone Event Mesh, as event-mesh.mtaext says explicitly.
const VARIANTS = [
  { broker: 'standalone Event Mesh', extension: 'event-mesh.mtaext', vars: 'deploy/cf/event-mesh.yml' },
  { broker: 'EMIS', extension: 'emis.mtaext', vars: 'deploy/cf/emis.yml' },
  { broker: 'AEM', extension: 'aem.mtaext', vars: 'deploy/cf/aem.yml' },
  { broker: 'Event Hub', extension: 'event-hub.mtaext', vars: 'deploy/cf/event-hub.yml' },
];
const extensionOf = (file: string) => parse(read(file)) as MtaExtension;

describe('cf push with one vars file per broker', () => {
  const byName = (bindings: Binding[]) => [...bindings].sort((a, b) => a.name.localeCompare(b.name));

  for (const { broker, extension, vars: varsFile } of VARIANTS) {
    describe(`${varsFile} (${broker})`, () => {
      const { manifest: pushed, vars, used } = pushedManifest(varsFile, MAIL_VARS);
      const [pushedApp] = pushed.applications;
      const deployed = deployment(mta, extensionOf(extension));

      itIsValidUnder('cloudfoundry-application-manifest', 'Cloud Foundry manifest once pushed', () => pushed);

      it('uses every variable it defines', () => {
        expect(Object.keys(vars).sort()).toEqual([...used].sort());
      });

      it(`binds the services ${extension} keeps active, with the same binding parameters`, () => {
        const bindings = (pushedApp?.services ?? []).map((service) =>
          typeof service === 'string' ? { name: service } : service,
        );
        expect(byName(bindings)).toEqual(byName(deployed.bindings));
      });

      it(`sets the environment mta.yaml sets with ${extension}, every value a string`, () => {
        expect(pushedApp?.env).toEqual({ ...deployed.env, ...ADDRESSES });
        for (const [key, value] of Object.entries(pushedApp?.env ?? {}))
          expect(typeof value, `${key} must be a quoted string in ${varsFile}`).toBe('string');
      });
    });
  }

  it.each(VARIANTS)(
    "stops a push with $vars but without the deployer's mail_from and mail_to",
    ({ vars }) => {
      expect(() => pushedManifest(vars)).toThrow('Expected to find variables: mail_from');
      expect(() => pushedManifest(vars, { mail_from: ADDRESSES.MAIL_FROM })).toThrow(
        'Expected to find variables: mail_to',
      );
    },
  );

  it('stops a push without a vars file, as cf push does', () => {
    expect(() => interpolate(parse(read('manifest.yml')), {}, new Set())).toThrow(
      /Expected to find variables/,
    );
  });
});

describe('the XSUAA instance under every descriptor', () => {
  const cases = [
    { name: 'mta.yaml alone', deployed: deployment(mta) },
    ...VARIANTS.map(({ extension }) => ({
      name: extension,
      deployed: deployment(mta, extensionOf(extension)),
    })),
  ];

  it('is found by its $XSSERVICENAME references, as a grant to an instance would name it', () => {
    const granting = { scopes: [{ 'grant-as-authority-to-apps': ['$XSSERVICENAME(fon-event-mesh)'] }] };
    expect(instancesNamedIn(granting)).toEqual(['fon-event-mesh']);
  });

  for (const { name, deployed } of cases) {
    it(`names, and waits for, only instances that ${name} keeps active`, () => {
      // An instance that is not created cannot be resolved by the XSUAA broker, nor waited for by the deployer.
      for (const instance of instancesNamedIn(deployed.serviceConfig('fon-uaa')))
        expect(deployed.active, `${instance} is inactive`).toContain(instance);
      for (const resource of mta.resources.filter((candidate) => deployed.active.has(candidate.name)))
        for (const before of resource['processed-after'] ?? [])
          expect(deployed.active, `${resource.name} waits for inactive ${before}`).toContain(before);
    });
  }

  it('is created from xs-security.json alone by cf push, which names no instance', () => {
    expect(instancesNamedIn(xsSecurity)).toEqual([]);
  });
});

describe('the approuter', () => {
  const xsApp = JSON.parse(read('approuter/xs-app.json')) as {
    welcomeFile: string;
    authenticationMethod: string;
    routes: { source: string; target: string; destination: string; authenticationType: string }[];
  };
  const approuterPkg = JSON.parse(read('approuter/package.json')) as {
    scripts: { start: string };
    dependencies: Record<string, string>;
    engines: { node: string };
  };
  const rootPkg = JSON.parse(read('package.json')) as { devDependencies: Record<string, string> };
  const module = mta.modules.find((candidate) => candidate.name === APPROUTER);
  const destinationsOf = (module?.requires ?? []) as Array<{
    name: string;
    group?: string;
    properties?: Record<string, unknown>;
  }>;
  const mtaDestination = destinationsOf.find((required) => required.group === 'destinations');
  const pushed = interpolate(
    parse(read('approuter/manifest.yml')),
    { service_url: 'https://fleet-order-notifier.cfapps.eu10.hana.ondemand.com' },
    new Set(),
  ) as { applications: Array<Record<string, unknown> & { env: { destinations: string } }> };
  const [pushedApp, ...otherPushedApps] = pushed.applications;
  const pushedDestinations = JSON.parse(pushedApp?.env.destinations ?? '[]') as Destination[];

  it('has an xs-app.json valid against the schema @sap/approuter ships', () => {
    const valid = xsAppSchema();
    expect(valid(xsApp), JSON.stringify(valid.errors)).toBe(true);
    // The schema is strict: a route property it does not know is refused.
    expect(valid({ ...xsApp, routes: [{ ...xsApp.routes[0], forwardAuthToken: true }] })).toBe(false);
  });

  it('logs users in through XSUAA and sends /console/ and /api/ to the service, welcoming them on the console', () => {
    expect(xsApp.authenticationMethod).toBe('route');
    expect(xsApp.welcomeFile).toBe('/console/');
    expect(xsApp.routes.map(({ source, target }) => [source, target])).toEqual([
      ['^/console/(.*)$', '/console/$1'],
      ['^/api/(.*)$', '/api/$1'],
    ]);
    for (const route of xsApp.routes) {
      expect(route.authenticationType).toBe('xsuaa');
      expect(route.destination).toBe(mtaDestination?.properties?.name);
    }
  });

  it("keeps mta.yaml, with the approuter's module, valid under SchemaStore's schema", REAL.options, () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addSchema(JSON.parse(REAL.read('schemas/mtad.json')));
    const validMta = ajv.compile(JSON.parse(REAL.read('schemas/mta.json')));
    expect(validMta(mta), JSON.stringify(validMta.errors)).toBe(true);
  });

  it("is a module of mta.yaml, bound to the service's XSUAA instance, with the service as a destination that forwards the token", () => {
    expect(module).toMatchObject({ type: 'approuter.nodejs', path: 'approuter' });
    expect(destinationsOf.map((required) => required.name)).toEqual(['fon-uaa', 'fon-api']);
    expect(mtaDestination).toEqual({
      name: 'fon-api',
      group: 'destinations',
      properties: { name: 'fleet-order-notifier', url: '~{url}', forwardAuthToken: true },
    });
    // fon-api is what the service's module provides: its own URL.
    expect(mtaModule.provides).toContainEqual({
      name: 'fon-api',
      properties: { url: '$' + '{default-url}' },
    });
    // The service's own archive leaves the approuter's folder out.
    expect(mtaModule['build-parameters'].ignore).toContain('approuter/');
  });

  it('starts as the approuter accepts, with the destination mta.yaml or a cf push gives it', () => {
    const fromMta = {
      ...(mtaDestination?.properties as object),
      url: 'https://fon.example.com',
    } as Destination;
    expect(() => approuterAccepts(xsApp, [fromMta], 'approuter')).not.toThrow();
    expect(() => approuterAccepts(xsApp, pushedDestinations, 'approuter')).not.toThrow();
    // A destination the routes do not name is a start-up failure, so the check can fail.
    expect(() => approuterAccepts(xsApp, [{ ...fromMta, name: 'elsewhere' }], 'approuter')).toThrow(
      /unknown destination/,
    );
  });

  itIsValidUnder(
    'cloudfoundry-application-manifest',
    "Cloud Foundry manifest (the approuter's)",
    () => pushed,
  );

  it('has a cf push variant binding the same XSUAA instance, with the same destination', () => {
    expect(otherPushedApps).toEqual([]);
    expect(pushedApp).toMatchObject({
      name: APPROUTER,
      services: [instanceOf('xsuaa')],
      memory: module?.parameters.memory,
      disk_quota: module?.parameters['disk-quota'],
    });
    expect(pushedDestinations).toEqual([
      {
        name: 'fleet-order-notifier',
        url: 'https://fleet-order-notifier.cfapps.eu10.hana.ondemand.com',
        forwardAuthToken: true,
      },
    ]);
  });

  it('starts @sap/approuter, the version whose schema these tests apply', () => {
    expect(approuterPkg.scripts.start).toBe('node node_modules/@sap/approuter/approuter.js');
    expect(pushedApp?.command).toBe(approuterPkg.scripts.start);
    expect(approuterPkg.dependencies['@sap/approuter']).toBe(rootPkg.devDependencies['@sap/approuter']);
    expect(approuterPkg.engines.node).toBe(pkg.engines.node);
  });

  it("offers a role collection for Viewer and one for Admin, to assign to the console's users", () => {
    const scopesOf = (collection: string) =>
      xsSecurity['role-collections']
        .find((candidate) => candidate.name === collection)
        ?.['role-template-references'].flatMap(
          (reference) =>
            xsSecurity['role-templates'].find((template) => `$XSAPPNAME.${template.name}` === reference)?.[
              'scope-references'
            ] ?? [],
        );
    expect(scopesOf('FleetNotifierViewer')).toEqual([`$XSAPPNAME.${SCOPES.viewer}`]);
    expect(scopesOf('FleetNotifierAdmin')).toEqual([
      `$XSAPPNAME.${SCOPES.viewer}`,
      `$XSAPPNAME.${SCOPES.admin}`,
    ]);
  });
});
