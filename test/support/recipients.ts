// Rows of mail_recipient as the tests add them: their addresses are personal data, so the log guard watches each.
import type { Pool } from 'pg';
import { watchLogFor } from './logGuard.js';

export interface Recipients {
  soldToParty: string;
  recipients: string[];
  /** Without it, the column's default. */
  locale?: string;
}

export async function addRecipients(pool: Pool, ...rows: Recipients[]): Promise<void> {
  for (const { soldToParty, recipients, locale } of rows) {
    watchLogFor('a recipient address', ...recipients);
    await (locale === undefined
      ? pool.query('insert into mail_recipient (sold_to_party, recipients) values ($1, $2)', [
          soldToParty,
          recipients,
        ])
      : pool.query('insert into mail_recipient (sold_to_party, recipients, locale) values ($1, $2, $3)', [
          soldToParty,
          recipients,
          locale,
        ]));
  }
}
