// Runs once before the test files: checks that PostgreSQL and RabbitMQ (AMQP 1.0) answer, and builds a
// migrated template database that each test file clones (CREATE DATABASE … TEMPLATE is fast).
import pg from 'pg';
import { migrate } from '../../src/db/migrate.js';
import { expectAmqp10, POSTGRES_URL, postgresUnreachable } from './services.js';

export default async function setup(): Promise<() => Promise<void>> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect().catch((err) => {
    throw postgresUnreachable(err);
  });
  await expectAmqp10();

  const template = `fon_template_${process.pid}`;
  await admin.query(`drop database if exists ${template}`);
  await admin.query(`create database ${template}`);
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${template}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
  await migrate(pool);
  await pool.end();
  // Forked test workers inherit the environment of this process.
  process.env.TEST_TEMPLATE_DATABASE = template;

  return async () => {
    await admin.query(`drop database if exists ${template} with (force)`);
    await admin.end();
  };
}
