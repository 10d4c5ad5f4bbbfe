// The broker seen from the operator's side: queue counts including what consumers hold, and dropping the
// connections of given processes only, never anyone else's.
//
// On RabbitMQ 3.10, AMQP 1.0 connections are not listed by `rabbitmqctl list_connections`, and
// `rabbitmqctl close_connection` on the connection pid that `list_channels` shows (the plugin's internal
// direct connection) leaves the client connected (both checked by hand). What identifies a service
// instance's connection reliably is the client's TCP port: `ss -tnp` maps it to the instance's pid, and the
// broker names each AMQP 1.0 session's channel after it (`127.0.0.1:PORT -> 127.0.0.1:5672 (1)`). The drop
// itself destroys the broker's end of exactly those sockets (`ss -K`), so the broker tears the connection
// down, returns what it held to the queue, and the client sees the connection reset.

import { setTimeout as sleep } from 'node:timers/promises';
import { privileged } from '../support/queueCounts.js';
import { AMQP_PORT } from '../support/services.js';

const CONNECTED_WITHIN_MS = 20_000;

export interface Dropped {
  /** Client ports of the processes' broker connections at the moment of the drop. */
  ports: number[];
  /** Of those, the ports the broker had named a session after just before: it knew them as AMQP 1.0 clients. */
  seenByBroker: number[];
  /** Broker-side sockets destroyed. */
  destroyed: number;
}

/** Drops the broker connections of the given processes, and only theirs. */
export async function dropBrokerConnections(pids: () => number[]): Promise<Dropped> {
  // rabbitmqctl takes a second or more; asked first, so that the drop itself happens on fresh ports.
  const { stdout: channels } = await privileged('rabbitmqctl', [
    'list_channels',
    '-q',
    '--no-table-headers',
    'name',
  ]);
  const named = new Set([...channels.matchAll(/:(\d+) -> /g)].map((match) => Number(match[1])));
  // Every instance may be between a kill and its reconnect at the chosen moment: the drop waits for one to hold
  // a connection, so that the run always tests a dropped connection.
  const deadline = Date.now() + CONNECTED_WITHIN_MS;
  let ports = await connectedPorts(new Set(pids()));
  while (ports.length === 0 && Date.now() < deadline) {
    await sleep(200);
    ports = await connectedPorts(new Set(pids()));
  }
  if (ports.length === 0) return { ports, seenByBroker: [], destroyed: 0 };
  const clients = ports.map((port) => `dport = :${port}`).join(' or ');
  const { stdout } = await privileged('ss', [
    '-K',
    '-tnH',
    'state',
    'established',
    `( sport = :${AMQP_PORT} ) and ( ${clients} )`,
  ]);
  const destroyed = stdout.split('\n').filter((line) => line.trim() !== '').length;
  return { ports, seenByBroker: ports.filter((port) => named.has(port)), destroyed };
}

/** Client ports of the given processes' established connections to the broker. */
async function connectedPorts(wanted: Set<number>): Promise<number[]> {
  const { stdout: sockets } = await privileged('ss', [
    '-tnpH',
    'state',
    'established',
    `( dport = :${AMQP_PORT} )`,
  ]);
  const ports: number[] = [];
  for (const line of sockets.split('\n')) {
    const pid = Number(/pid=(\d+)/.exec(line)?.[1]);
    const local = line.trim().split(/\s+/)[2];
    const port = Number(local?.slice(local.lastIndexOf(':') + 1));
    if (wanted.has(pid) && port > 0) ports.push(port);
  }
  return ports;
}

/** Fails with what to do when the suite cannot observe or fault the broker. */
export async function checkBrokerControl(): Promise<void> {
  try {
    await privileged('rabbitmqctl', ['list_queues', '-q', 'name']);
  } catch (err) {
    throw new Error(
      `rabbitmqctl does not answer (${(err as Error).message.split('\n')[0]}). The crash suite reads queue counts ` +
        'with rabbitmqctl, as root or through passwordless sudo. Start the local services with: ' +
        'bash scripts/ensure-services.sh',
    );
  }
  try {
    await privileged('ss', ['-K', '-tnH', 'state', 'established', '( sport = :1 and dport = :1 )']);
  } catch (err) {
    throw new Error(
      `ss -K is not available (${(err as Error).message.split('\n')[0]}): the crash suite drops the service's ` +
        'broker connections by destroying their sockets, which needs root (or passwordless sudo) and a kernel ' +
        'with INET_DIAG_DESTROY',
    );
  }
}
