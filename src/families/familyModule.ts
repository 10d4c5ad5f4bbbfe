// An event family's whole contract: one part per port of the shared path, each port declared beside the module
// that asks for it (events/family.ts, notifications/mailKind.ts, portal/pushKind.ts, http/familyAdmin.ts,
// maintenance/retention.ts). src/families/index.ts lists the families and hands each port its parts.

import type { Pool } from 'pg';
import type { Registry } from 'prom-client';
import type { Config } from '../config/loadConfig.js';
import type { Executor } from '../db/transaction.js';
import type { EventKeys, Family } from '../events/family.js';
import type { FamilyAdmin } from '../http/familyAdmin.js';
import type { Expiry } from '../maintenance/retention.js';
import type { MailKind } from '../notifications/mailKind.js';
import type { PushKind } from '../portal/pushKind.js';
import type { ODataService } from '../s4/odataService.js';
import type { FamilyDeps } from './familyDeps.js';

/** The families' own settings (src/config/). */
export type FamilySettings = Pick<Config, 'salesOrder' | 'customerReturn'>;

export interface FamilyModule extends EventKeys {
  /** The `family` label of the metrics. */
  label: string;
  /** Its reader and effect, built by the composition root. */
  create(deps: FamilyDeps, config: Readonly<Config>): Family;
  /** Its email, with the family's own settings (a link's template) bound. */
  mail(settings: FamilySettings): Omit<MailKind, 'family' | 'logKey' | 'spanKey'>;
  /** Its portal PUT (the composition root adds its name and key's name, as for mail). */
  push: Omit<PushKind, 'family' | 'logKey'>;
  admin: FamilyAdmin;
  /** What retention removes of its tables, beside the shared tables' expiries. */
  expiries: readonly Expiry[];
  /** Its own Prometheus gauges, read from its tables at scrape time. */
  gauges?(registry: Registry, pool: Pool): void;
  /** What reconciliation reads of it (src/reconcile/collection.ts); without it the family is not reconciled. */
  reconcile?: {
    collection(config: Readonly<Config>): FamilyCollection<unknown>;
    /** The keys of the documents the service holds as open: a sweep reads those S/4HANA no longer lists open. */
    openKeys(db: Executor): Promise<string[]>;
  };
}

/** A family's collection: the entity set its events read, its open documents, each row mapped to its state. */
export interface FamilyCollection<State> {
  /** The service event reads use; its `$select`, if any, names the key property and LastChangeDateTime. */
  service: ODataService;
  /** The documents a sweep re-reads, as a `$filter` expression on the entity set. */
  openFilter: string;
  /** The state an event's read of this entity would give. */
  map(entity: Record<string, unknown>, key: string): State;
  /** The state after the family's Deleted event; without it a document S/4HANA no longer has is not found. */
  deleted?(key: string, readAt: Date): State;
}
