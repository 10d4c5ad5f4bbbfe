// Where the tests find the real services, and a clear failure when they are not there.
import { connect } from 'node:net';

export const POSTGRES_URL =
  process.env.TEST_DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/postgres';
export const AMQP_HOST = process.env.TEST_AMQP_HOST ?? '127.0.0.1';
export const AMQP_PORT = Number(process.env.TEST_AMQP_PORT ?? 5672);
export const AMQP_URL = `amqp://guest:guest@${AMQP_HOST}:${AMQP_PORT}`;

const HOW_TO_START = 'Start the local services with: bash scripts/ensure-services.sh';

/** Resolves when RabbitMQ answers the AMQP 1.0 header on its port; rejects with a message that says what to do. */
export function expectAmqp10(): Promise<void> {
  const header = Buffer.from([65, 77, 81, 80, 3, 1, 0, 0]);
  return new Promise((resolve, reject) => {
    const socket = connect(AMQP_PORT, AMQP_HOST);
    const fail = (why: string) => {
      socket.destroy();
      reject(
        new Error(
          `RabbitMQ with AMQP 1.0 is not reachable at ${AMQP_HOST}:${AMQP_PORT} (${why}). ${HOW_TO_START}`,
        ),
      );
    };
    socket.setTimeout(3000, () => fail('no answer within 3 s'));
    socket.on('error', (err) => fail(err.message));
    socket.on('connect', () => socket.write(header));
    socket.on('data', (data) => {
      socket.destroy();
      if (data.subarray(0, 8).equals(header)) resolve();
      else fail('the broker answers AMQP 0-9-1 only: enable the rabbitmq_amqp1_0 plugin');
    });
  });
}

export function postgresUnreachable(err: unknown): Error {
  return new Error(
    `PostgreSQL is not reachable at ${POSTGRES_URL} (${(err as Error).message}). ${HOW_TO_START}`,
  );
}
