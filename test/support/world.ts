import { type S4Server, startS4Server } from '../../sandbox/s4Server.js';
import { type SmtpSink, startSmtpServer } from '../../sandbox/smtpServer.js';
import { createPublisher, type Publisher } from './broker.js';
import { createTestDatabase, type TestDatabase } from './database.js';

/** What a test file's service talks to: its own database, S/4HANA and SMTP stand-ins, and a publisher. */
export interface World {
  db: TestDatabase;
  s4: S4Server;
  smtp: SmtpSink;
  publisher: Publisher;
}

export async function startWorld(): Promise<World> {
  const [db, s4, smtp, publisher] = await Promise.all([
    createTestDatabase(),
    startS4Server(),
    startSmtpServer(),
    createPublisher(),
  ]);
  return { db, s4, smtp, publisher };
}

/** Stops whatever of the world was started. */
export async function stopWorld(world: Partial<World>): Promise<void> {
  await Promise.all([world.db?.drop(), world.s4?.close(), world.smtp?.close(), world.publisher?.close()]);
}
