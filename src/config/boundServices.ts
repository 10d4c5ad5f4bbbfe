// The bound services' credentials (VCAP_SERVICES, as envReader.ts read it from the environment it was given)
// made into typed settings. Problems are collected as in the other config modules; nothing here reads the
// environment.

import type { XsuaaCredentials } from '../http/auth.js';
import type { IasCredentials } from '../http/eventHubAuth.js';
import type { EventMeshManagement } from '../messaging/eventMeshSetup.js';

export interface BoundService {
  label?: unknown;
  tags?: unknown[];
  credentials?: Record<string, unknown>;
}

/** Cloud Foundry's VCAP_SERVICES: service instances grouped by label. */
export function boundServices(vcap: string | undefined, problems: string[]): BoundService[] {
  if (vcap === undefined || vcap.trim() === '') return [];
  try {
    const byLabel = JSON.parse(vcap) as Record<string, BoundService[]>;
    return Object.values(byLabel).flatMap((instances) => (Array.isArray(instances) ? instances : []));
  } catch {
    problems.push('VCAP_SERVICES is not valid JSON');
    return [];
  }
}

export const XSUAA_FIELDS = ['clientid', 'xsappname', 'uaadomain', 'url'] as const;

export function isXsuaaCredentials(
  credentials: Record<string, unknown>,
): credentials is Record<string, unknown> & XsuaaCredentials {
  return XSUAA_FIELDS.every((field) => typeof credentials[field] === 'string');
}

export function iasCredentials(
  credentials: Record<string, unknown>,
  problems: string[],
): IasCredentials | undefined {
  const { clientid, url, domains } = credentials;
  const missing = [typeof clientid === 'string' ? '' : 'clientid', typeof url === 'string' ? '' : 'url'];
  if (missing.some((field) => field !== '')) {
    problems.push(`the bound identity service lacks ${missing.filter((field) => field !== '').join(', ')}`);
    return undefined;
  }
  if (!URL.canParse(String(url))) {
    problems.push('the bound identity service url is not a URL');
    return undefined;
  }
  // The binding lists the trusted issuer domains; should it not, the tenant's own host is the one to trust.
  const trusted = Array.isArray(domains) ? domains.map(String) : [new URL(String(url)).host];
  return { clientid: String(clientid), url: String(url), domains: trusted };
}

export function eventBrokerClientId(
  credentials: Record<string, unknown>,
  problems: string[],
): string | undefined {
  const clientId = (credentials.ias as { clientId?: unknown } | undefined)?.clientId;
  if (typeof clientId === 'string' && clientId !== '') return clientId;
  problems.push(
    'the bound event-broker service lacks ias.clientId (bind it with authentication-type X509_IAS)',
  );
  return undefined;
}

export function managementOf(
  messaging: Record<string, unknown> | undefined,
): EventMeshManagement | undefined {
  const entry = (messaging?.management as Array<Partial<EventMeshManagement>> | undefined)?.[0];
  const oa2 = entry?.oa2;
  if (typeof entry?.uri !== 'string' || oa2 === undefined) return undefined;
  return {
    uri: entry.uri,
    oa2: {
      clientid: String(oa2.clientid),
      clientsecret: String(oa2.clientsecret),
      tokenendpoint: String(oa2.tokenendpoint),
    },
  };
}

/** What a user-provided service tagged `amqp` holds: `{ uri, username, password }` or `{ uri, certificate, key, ca? }`. */
export interface AmqpServiceCredentials {
  uri: string;
  username?: string;
  password?: string;
  certificate?: string;
  key?: string;
  ca?: string;
}

export function amqpServiceCredentials(
  credentials: Record<string, unknown> | undefined,
  problems: string[],
): AmqpServiceCredentials | undefined {
  const field = (name: string) =>
    typeof credentials?.[name] === 'string' && credentials[name] !== ''
      ? String(credentials[name])
      : undefined;
  const uri = field('uri');
  if (uri === undefined) {
    problems.push('the bound service with tag "amqp" lacks uri (amqps://host:port)');
    return undefined;
  }
  const optional = ['username', 'password', 'certificate', 'key', 'ca'].flatMap((name) => {
    const value = field(name);
    return value === undefined ? [] : [[name, value]];
  });
  return { uri, ...Object.fromEntries(optional) };
}
