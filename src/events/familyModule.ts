// What the shared path asks an event family for, and nothing else: which CloudEvent types are its and the key
// their data names, its read and effect (family.ts), how its outbox rows become an email and a portal PUT, and
// what logs and traces call its key. src/families/index.ts lists the families; each lives in its own folder.
import type { SendMailOptions } from 'nodemailer';
import type { Config } from '../config/loadConfig.js';
import type { ClaimedMail } from '../notifications/mailOutbox.js';
import type { ClaimedPush } from '../portal/pushOutbox.js';
import type { Family, FamilyDeps } from './family.js';
import type { Failure } from './reasonText.js';

/** What every family's email is rendered with: the sender, MAIL_LOCALE, PORTAL_ORDER_URL. */
export interface MailSettings {
  from: string;
  locale: string;
  portalOrderUrl?: string | undefined;
}

// Methods, not function properties: a family typed by its own rows still counts as a FamilyModule of any row,
// and the kind of the row (the `kind` column) is what chose the family.
export interface FamilyModule<
  Mail extends ClaimedMail = ClaimedMail,
  Push extends ClaimedPush = ClaimedPush,
> {
  /** ParsedEvent.family of its events. */
  name: string;
  /** The `family` label of the metrics. */
  label: string;
  /** The key's name in log lines (`salesOrder`) and in span attributes (`sap.sales_order`). */
  logKey: string;
  spanKey: string;
  /** Whether a CloudEvent type is the family's, handled or not: an unhandled one is refused by keyOf. */
  owns(type: string): boolean;
  /** The key an event's data names, normalised as every table holds it, or why the event is refused. */
  keyOf(type: string, data: unknown): { ok: true; key: string } | Failure;
  /** Its reader and effect, built by the composition root. */
  create(deps: FamilyDeps, config: Readonly<Config>): Family;
  mail: {
    /** mail_outbox.kind of its rows. */
    kind: string;
    keyOf(mail: Mail): string;
    render(mail: Mail, settings: MailSettings): SendMailOptions;
  };
  push: {
    /** portal_push.kind of its rows. */
    kind: string;
    keyOf(push: Push): string;
    /** The PUT's path below the portal's base URL, and its JSON body. */
    request(push: Push): { path: string; body: unknown };
  };
}
