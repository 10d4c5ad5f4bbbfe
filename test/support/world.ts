import { afterAll, beforeAll } from 'vitest';
import { type S4Server, startS4Server } from '../../sandbox/s4Server.js';
import { type SmtpSink, startSmtpServer } from '../../sandbox/smtpServer.js';
import { createPublisher, type Publisher } from './broker.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import type { LocalEndpoints } from './serviceEnv.js';

/** What a test file's service talks to: its own database, S/4HANA and SMTP stand-ins, and a publisher. */
export interface World {
  db: TestDatabase;
  s4: S4Server;
  smtp: SmtpSink;
  publisher: Publisher;
  /** Where a service finds this world's database, S/4HANA and SMTP relay. */
  endpoints(): LocalEndpoints;
}

/**
 * This file's world: started before its first test, stopped after its last. Call it before the file's own hooks,
 * so that they run after the world is there and (vitest runs after-hooks in reverse) end before it stops. Its parts
 * exist once beforeAll ran; reading one earlier fails, so a top-level read cannot pass on a stand-in that is not
 * there yet.
 */
export function useWorld(): World {
  let parts: Omit<World, 'endpoints'> | undefined;
  beforeAll(async () => {
    const [db, s4, smtp, publisher] = await Promise.all([
      createTestDatabase(),
      startS4Server(),
      startSmtpServer(),
      createPublisher(),
    ]);
    parts = { db, s4, smtp, publisher };
  });
  afterAll(async () => {
    await Promise.all([parts?.db.drop(), parts?.s4.close(), parts?.smtp.close(), parts?.publisher.close()]);
  });
  const started = () => {
    if (parts === undefined) throw new Error('the world starts in beforeAll: use it in a hook or a test');
    return parts;
  };
  return {
    get db() {
      return started().db;
    },
    get s4() {
      return started().s4;
    },
    get smtp() {
      return started().smtp;
    },
    get publisher() {
      return started().publisher;
    },
    endpoints: () => ({
      databaseUrl: started().db.url,
      s4Url: started().s4.url,
      smtpUrl: started().smtp.url,
    }),
  };
}
