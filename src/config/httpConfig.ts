// The HTTP side: the port, who may call the admin API and the Event Mesh webhook (AUTH, XSUAA), and who may
// push to /event-hub/events (IAS, with `event-hub` in INGEST).

import type { XsuaaCredentials } from '../http/auth.js';
import type { EventHubAuthSettings } from '../http/eventHubAuth.js';
import { eventBrokerClientId, iasCredentials, isXsuaaCredentials, XSUAA_FIELDS } from './boundServices.js';
import type { EnvReader } from './envReader.js';
import type { Ingest } from './ingestConfig.js';

export type AuthSettings = { kind: 'xsuaa'; credentials: XsuaaCredentials } | { kind: 'none' };

export interface HttpSettings {
  port: number;
  auth: AuthSettings;
  /** With `event-hub` in INGEST: who may push to /event-hub/events (whatever AUTH says). */
  eventHub: EventHubAuthSettings | undefined;
}

export function httpConfig(read: EnvReader, ingest: readonly Ingest[]): HttpSettings {
  const { problems } = read;
  let auth: AuthSettings = { kind: 'none' };
  const authKind = read.text('AUTH', 'xsuaa');
  if (authKind === 'xsuaa') {
    const credentials = read.bound('xsuaa');
    const missing = XSUAA_FIELDS.filter((k) => typeof credentials?.[k] !== 'string');
    if (credentials === undefined)
      problems.push('AUTH=xsuaa needs a bound xsuaa service (AUTH=none for local runs)');
    else if (!isXsuaaCredentials(credentials))
      problems.push(`the bound xsuaa service lacks ${missing.join(', ')}`);
    else auth = { kind: 'xsuaa', credentials };
  } else if (authKind !== 'none') {
    problems.push(`AUTH takes "xsuaa" or "none", got "${authKind}"`);
  }

  // Event Hub's pushes are authenticated by IAS whatever AUTH says: without both bindings, no start.
  let eventHub: EventHubAuthSettings | undefined;
  if (ingest.includes('event-hub')) {
    const needed = (label: string, why: string): Record<string, unknown> | undefined => {
      const credentials = read.bound(label);
      if (credentials === undefined) problems.push(`INGEST includes event-hub, which needs a bound ${why}`);
      return credentials;
    };
    const identityBinding = needed('identity', 'identity (IAS) service to check tokens');
    const identity = identityBinding === undefined ? undefined : iasCredentials(identityBinding, problems);
    const brokerBinding = needed('event-broker', 'event-broker service (its ias.clientId)');
    const eventHubClientId =
      brokerBinding === undefined ? undefined : eventBrokerClientId(brokerBinding, problems);
    if (identity !== undefined && eventHubClientId !== undefined) eventHub = { identity, eventHubClientId };
  }

  return { port: read.int('PORT', 8080, 0, 65535), auth, eventHub };
}
