// The benchmark's own database and queue on the local PostgreSQL and RabbitMQ, created for one run and
// removed afterwards. Nothing else on the shared services is touched.
import { randomBytes } from 'node:crypto';
import amqplib from 'amqplib';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';

export const POSTGRES_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/postgres';
export const AMQP_HOST = process.env.BENCH_AMQP_HOST ?? '127.0.0.1';
export const AMQP_PORT = Number(process.env.BENCH_AMQP_PORT ?? 5672);
export const AMQP_URL = `amqp://guest:guest@${AMQP_HOST}:${AMQP_PORT}`;

const BENCH_APPLICATION = 'fon-bench';

export interface BenchDatabase {
  url: string;
  /** A small pool for the benchmark's own reads (progress, timestamps). */
  pool: pg.Pool;
  /** Process ids of the other sessions on this database: the service's backends while it runs. */
  backendPids(): Promise<number[]>;
  /** Empties every table the service writes, between scenarios. */
  reset(): Promise<void>;
  drop(): Promise<void>;
}

export async function createBenchDatabase(): Promise<BenchDatabase> {
  const name = `fon_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  // Named, so that its own connections are told apart from the service's in pg_stat_activity.
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2, application_name: BENCH_APPLICATION });
  await migrate(pool);
  return {
    url: url.toString(),
    pool,
    async backendPids() {
      const { rows } = await pool.query<{ pid: number }>(
        `select pid from pg_stat_activity
         where datname = current_database() and application_name is distinct from $1::text`,
        [BENCH_APPLICATION],
      );
      return rows.map((row) => row.pid);
    },
    async reset() {
      await pool.query(
        `truncate processed_event, event_attempt, portal_order_status, order_notification, mail_outbox, dead_letter`,
      );
      // Fresh statistics after a truncate, so the planner does not keep plans made for empty tables.
      await pool.query('analyze');
    },
    async drop() {
      await pool.end();
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

export interface BenchQueue {
  name: string;
  /** The AMQP 1.0 address of the queue. */
  address: string;
  /** Messages ready in the queue and in its dead-letter queue. */
  depth(): Promise<{ ready: number; deadLettered: number }>;
  purge(): Promise<void>;
  delete(): Promise<void>;
}

/** A durable queue dead-lettering into `<name>.dlq`, as the service is deployed against. */
export async function createBenchQueue(prefix: string): Promise<BenchQueue> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  const deadLetterName = `${name}.dlq`;
  const connection = await amqplib.connect(AMQP_URL);
  const channel = await connection.createChannel();
  await channel.assertQueue(deadLetterName, { durable: true });
  await channel.assertQueue(name, {
    durable: true,
    arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': deadLetterName },
  });
  return {
    name,
    address: `/amq/queue/${name}`,
    async depth() {
      const [queue, dlq] = await Promise.all([channel.checkQueue(name), channel.checkQueue(deadLetterName)]);
      return { ready: queue.messageCount, deadLettered: dlq.messageCount };
    },
    async purge() {
      await channel.purgeQueue(name);
    },
    async delete() {
      await channel.deleteQueue(name);
      await channel.deleteQueue(deadLetterName);
      await connection.close();
    },
  };
}
