// The PostgreSQL connection: DATABASE_URL, else the bound postgresql-db service with TLS.
import type { PoolConfig } from 'pg';
import type { EnvReader } from './envReader.js';

export function databaseConfig(read: EnvReader): PoolConfig {
  const url = read.optional('DATABASE_URL');
  const database = url === undefined ? fromBinding(read) : { connectionString: url };
  database.max = read.int('DATABASE_POOL_SIZE', 20, 1, 100);
  return database;
}

function fromBinding(read: EnvReader): PoolConfig {
  const credentials = read.bound('postgresql-db');
  if (credentials === undefined) {
    read.problems.push('DATABASE_URL is not set and no postgresql-db service is bound');
    return {};
  }
  return {
    host: String(credentials.hostname),
    port: Number(credentials.port), // the binding gives the port as a string
    database: String(credentials.dbname),
    user: String(credentials.username),
    password: String(credentials.password),
    // TLS with the binding's root certificate, verification kept on.
    ssl: { ca: String(credentials.sslrootcert), rejectUnauthorized: true },
  };
}
