// Where AMQP events come from: the broker (by URL, a user-provided `amqp` service, or Event Mesh), the queue,
// and, with EVENT_MESH_SETUP, the Event Mesh queue and subscriptions the service creates at start. Read only
// when events come over AMQP: a webhook-only start never fails on broker settings.

import type { EventMeshManagement } from '../messaging/eventMeshSetup.js';
import { type AmqpBroker, fromAmqpService, fromAmqpUrl, fromEventMesh, pemPair } from './amqpBroker.js';
import { managementOf } from './boundServices.js';
import type { EnvReader } from './envReader.js';

export type { AmqpBroker, ClientCertificate } from './amqpBroker.js';

/** Binding labels of Event Mesh: standalone, and Event Mesh in SAP Integration Suite. */
export const EVENT_MESH_LABELS = ['enterprise-messaging', 'event-mesh-message-client'] as const;

export interface AmqpSettings {
  broker: AmqpBroker;
  queue: string;
  /**
   * AMQP_PREFETCH: most unsettled messages held at once, fixed. Unset, the window adapts between a floor and a
   * ceiling (messaging/creditWindow.ts).
   */
  prefetch: number | undefined;
}

export interface EventMeshSetup {
  management: EventMeshManagement;
  topics: string[];
  maxRedeliveryCount: number;
}

export function brokerConfig(read: EnvReader): {
  amqp: AmqpSettings | undefined;
  eventMesh: EventMeshSetup | undefined;
} {
  const { problems } = read;
  const prefetch =
    read.optional('AMQP_PREFETCH') === undefined ? undefined : read.int('AMQP_PREFETCH', 50, 1, 5000);
  const queue = read.optional('AMQP_QUEUE');
  if (queue === undefined) problems.push('AMQP_QUEUE is required when INGEST includes amqp');
  const amqpUrl = read.optional('AMQP_URL');
  const meshes = EVENT_MESH_LABELS.filter((label) => read.bound(label) !== undefined);
  if (meshes.length > 1)
    problems.push(
      `both ${meshes.join(' and ')} services are bound; bind the one Event Mesh the queue lives in`,
    );
  const messaging = meshes.length === 1 ? read.bound(meshes[0] as string) : undefined;
  const tagged = read.tagged('amqp');
  if (tagged.length > 1) problems.push(`${tagged.length} services with tag "amqp" are bound; bind one`);
  const clientCertificate = pemPair(
    read.optional('AMQP_CLIENT_CERT'),
    read.optional('AMQP_CLIENT_KEY'),
    problems,
  );
  let broker: AmqpBroker | undefined;
  if (amqpUrl !== undefined) broker = fromAmqpUrl(amqpUrl, clientCertificate, problems);
  else if (tagged[0] !== undefined) broker = fromAmqpService(tagged[0].credentials, problems);
  else if (messaging !== undefined) broker = fromEventMesh(messaging, meshes[0] as string, problems);
  let amqp: AmqpSettings | undefined;
  if (broker === undefined) {
    if (amqpUrl === undefined && tagged.length === 0 && meshes.length === 0)
      problems.push(
        'AMQP_URL is not set and no AMQP broker is bound (a user-provided service with tag "amqp", or enterprise-messaging or event-mesh-message-client)',
      );
  } else if (queue !== undefined) {
    amqp = { broker, queue, prefetch };
  }
  let eventMesh: EventMeshSetup | undefined;
  if (read.optional('EVENT_MESH_SETUP') === 'true') {
    const management = managementOf(messaging);
    if (management === undefined)
      problems.push(
        'EVENT_MESH_SETUP=true needs a bound enterprise-messaging or event-mesh-message-client service',
      );
    const topics = read.list('EVENT_MESH_TOPICS');
    if (topics.length === 0) problems.push('EVENT_MESH_SETUP=true needs EVENT_MESH_TOPICS');
    const maxRedeliveryCount = read.int('EVENT_MESH_MAX_REDELIVERY', 10, 1, 100);
    if (management !== undefined) eventMesh = { management, topics, maxRedeliveryCount };
  }
  return { amqp, eventMesh };
}
