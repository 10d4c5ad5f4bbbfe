// Creates the service's Event Mesh queue, its dead message queue and the queue's topic subscriptions through
// the Event Mesh management REST API (the service descriptor cannot declare them). Every call is a PUT, which
// creates or updates, so this runs safely at every start and also applies a changed redelivery count.
// Queue property names follow SAP's management API (QueueP): accessType, deadMsgQueue, maxRedeliveryCount.

export interface EventMeshManagement {
  uri: string;
  oa2: { clientid: string; clientsecret: string; tokenendpoint: string };
}

export interface EnsureQueueOptions {
  /** `credentials.management[0]` of the enterprise-messaging binding. */
  management: EventMeshManagement;
  /** The queue name; an AMQP address prefix `queue:` is dropped, the management API names queues without it. */
  queue: string;
  deadMessageQueue: string;
  topics: string[];
  maxRedeliveryCount: number;
  /** Per HTTP call; the whole setup runs inside the platform's start-up health check window. */
  timeoutMs?: number;
}

const QUEUES_PATH = '/hub/rest/api/v1/management/messaging/queues';

export async function ensureEventMeshQueue(
  options: EnsureQueueOptions,
): Promise<{ queue: string; subscriptions: string[] }> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const queue = withoutPrefix(options.queue);
  const deadMessageQueue = withoutPrefix(options.deadMessageQueue);
  const topics = [...new Set(options.topics)];
  const { oa2 } = options.management;
  const secrets = [oa2.clientsecret];

  const token = await fetchToken(oa2, timeoutMs, secrets);
  secrets.push(token);
  const base = `${options.management.uri.replace(/\/+$/, '')}${QUEUES_PATH}`;
  const put = async (step: string, path: string, body?: object, alsoFine: number[] = []): Promise<void> => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const init = { method: 'PUT', headers, body: body === undefined ? undefined : JSON.stringify(body) };
    const response = await send(step, `${base}/${path}`, init, timeoutMs, secrets, alsoFine);
    await response.body?.cancel(); // the answer echoes the entity; nothing here needs it
  };

  // The dead message queue first: the queue below names it, and it must exist to receive anything.
  await put(`create the dead message queue ${deadMessageQueue}`, encodeURIComponent(deadMessageQueue));
  // NON_EXCLUSIVE spreads messages over all instances; ordering does not matter because every event
  // makes the service re-read the current order. Rejected and over-redelivered messages go to the DMQ.
  await put(`create the queue ${queue}`, encodeURIComponent(queue), {
    accessType: 'NON_EXCLUSIVE',
    deadMsgQueue: deadMessageQueue,
    maxRedeliveryCount: options.maxRedeliveryCount,
  });
  for (const topic of topics) {
    // A 409 (conflict) on a subscription reports that it exists already: the state this call wants.
    const path = `${encodeURIComponent(queue)}/subscriptions/${encodeURIComponent(topic)}`;
    await put(`subscribe the queue ${queue} to ${topic}`, path, undefined, [409]);
  }
  return { queue, subscriptions: topics };
}

async function fetchToken(
  oa2: EventMeshManagement['oa2'],
  timeoutMs: number,
  secrets: string[],
): Promise<string> {
  const init = {
    method: 'POST',
    headers: {
      // Unencoded id:secret, as `curl -u` sends it in SAP's Event Mesh examples.
      authorization: `Basic ${Buffer.from(`${oa2.clientid}:${oa2.clientsecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    },
    body: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
  };
  const step = 'get a management token';
  const response = await send(step, oa2.tokenendpoint, init, timeoutMs, secrets, []);
  const body = (await response.json().catch(() => ({}))) as { access_token?: unknown };
  if (typeof body.access_token !== 'string' || body.access_token === '') {
    throw new Error(`Event Mesh setup failed to ${step}: HTTP ${response.status} without an access_token`);
  }
  return body.access_token;
}

async function send(
  step: string,
  url: string,
  init: RequestInit,
  timeoutMs: number,
  secrets: string[],
  alsoFine: number[],
): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    throw new Error(`Event Mesh setup failed to ${step}: ${redact(reason, secrets)}`, { cause: err });
  }
  if (response.ok || alsoFine.includes(response.status)) return response;
  // The broker's reason ("queue limit reached", "not allowed by rules") is what an operator needs to see.
  const detail = redact((await response.text().catch(() => '')).trim().slice(0, 300), secrets);
  throw new Error(`Event Mesh setup failed to ${step}: HTTP ${response.status}${detail ? ` ${detail}` : ''}`);
}

function redact(text: string, secrets: string[]): string {
  return secrets.reduce((out, secret) => (secret === '' ? out : out.split(secret).join('***')), text);
}

function withoutPrefix(name: string): string {
  return name.startsWith('queue:') ? name.slice('queue:'.length) : name;
}
