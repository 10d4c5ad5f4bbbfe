// What every family's effect is given and reports, whatever its tables: the handler settles by the result and
// wakes the senders of what the commit queued.
import type { ProcessedResult } from './processedRecord.js';

/** What the effect needs to queue an email: default recipients and language, and the Message-ID's domain. */
export interface EffectMail {
  to: string[];
  /** MAIL_LOCALE: the language of customers without their own in mail_recipient. */
  locale: string;
  messageIdDomain: string;
}

export interface EffectResult {
  /** A family's effect may settle an event as not found or, for a return, as not a warranty case. */
  result: ProcessedResult | 'duplicate';
  /** An email was queued in the outbox: wake the sender. */
  mailQueued: boolean;
  /** A push of the state to the portal's API was queued: wake the portal sender. */
  pushQueued: boolean;
}
