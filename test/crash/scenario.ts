// The run's plan, drawn from the seed alone: which orders change in S/4HANA in each phase and how, the
// events that announce the changes (several per change, some published more than once), events that change
// nothing, malformed messages, the publish order, and when instances are killed or dependencies fail.
import { OTHER_TYPE, S4_SOURCE, salesOrderData, salesOrderEvent } from '../../sandbox/s4Events.js';
import type { SalesOrderState } from '../../sandbox/s4Server.js';
import { type ExpectedStatus, expectedStatus } from './portalStatusTable.js';
import { createRandom, type Random } from './random.js';
import { mixReturns, RETURNS, type ReturnChange, type ReturnHistory } from './returnLoad.js';

export type ChangeKind = 'created' | 'status' | 'date' | 'status+date' | 'reference only';

export interface PlannedMessage {
  body: string;
  contentType: string;
  /** `source id` of a valid event; undefined for a malformed message. */
  identity: string | undefined;
  /** The marker a malformed message carries in its body. */
  malformed: string | undefined;
}

export type ActionKind = 'kill' | 'postgres restart' | 'broker drop' | 'terminate sessions';

/** The moment a session termination waits for (test/crash/sessionTerminator.ts). */
export type TerminationAim = 'any' | 'transaction' | 'retention' | 'mail';
// Aimed at in the phases after the first; the first aims at the mail relay's acceptance, since it queues an
// email for every order and so cannot miss that moment.
const LATER_AIMS: TerminationAim[] = ['transaction', 'retention', 'any'];

export interface PlannedAction {
  atMs: number;
  kind: ActionKind;
  /** Kill: which live instance (modulo their number); restart follows after `pauseMs`. Restart: downtime. */
  pick: number;
  /** Kill: wait for a reconciliation run in progress and kill the instance running it (`pick` if none comes). */
  atRun?: boolean;
  pauseMs: number;
  /** Terminate sessions: the moment to wait for. */
  aim?: TerminationAim;
}

export interface Phase {
  index: number;
  /**
   * New S/4HANA states in the order they are set: before batch `batch` is published (0: before the phase's
   * events). Some orders change a second time late in the phase, so that two emails of one order are queued
   * close together while instances are killed: they must arrive in this order.
   */
  changes: Array<{ kind: ChangeKind; state: SalesOrderState; batch: number; dropped?: boolean }>;
  /**
   * An order with a follow-up change whose publishing waits until the relay has the email of the order's first
   * state in the phase: two emails of one order in one phase happen for certain, not by chance.
   */
  aimedOrder: string | undefined;
  /** New S/4HANA states of customer returns and their deletions, each before the batch it names. */
  returnChanges: ReturnChange[];
  /** Messages in publish order, in batches published `batchGapMs` apart; the last holds follow-up changes. */
  batches: PlannedMessage[][];
  batchGapMs: number;
  /** Every distinct valid event identity (`source id`) of the phase. */
  identities: string[];
  /** Markers of the phase's malformed messages, one message each. */
  malformed: string[];
  actions: PlannedAction[];
  /** Orders whose reads fail (503) for this many calls from the phase's start: forces releases. */
  s4Outages: Array<{ salesOrder: string; failingCalls: number }>;
  /** The same for customer returns. */
  returnOutages: Array<{ customerReturn: string; failingCalls: number }>;
  counts: { events: number; copies: number; duplicateCopies: number; eventsOfOtherTypes: number };
}

export interface PlanOptions {
  orders: number;
  phases: number;
  changeShare: number;
}

const STATUS_FIELDS: Record<ExpectedStatus, Partial<SalesOrderState>> = {
  Open: {
    overallSDProcessStatus: 'A',
    overallDeliveryStatus: 'A',
    rejectionStatus: 'A',
    deliveryBlockReason: '',
  },
  InProcess: {
    overallSDProcessStatus: 'B',
    overallDeliveryStatus: 'A',
    rejectionStatus: 'A',
    deliveryBlockReason: '',
  },
  DeliveryBlocked: {
    overallSDProcessStatus: 'B',
    overallDeliveryStatus: 'A',
    rejectionStatus: 'A',
    deliveryBlockReason: '01',
  },
  PartiallyDelivered: {
    overallSDProcessStatus: 'B',
    overallDeliveryStatus: 'B',
    rejectionStatus: 'A',
    deliveryBlockReason: '',
  },
  Delivered: {
    overallSDProcessStatus: 'C',
    overallDeliveryStatus: 'C',
    rejectionStatus: 'A',
    deliveryBlockReason: '',
  },
  Rejected: {
    overallSDProcessStatus: 'C',
    overallDeliveryStatus: 'A',
    rejectionStatus: 'C',
    deliveryBlockReason: '',
  },
};
const STATUSES = Object.keys(STATUS_FIELDS) as ExpectedStatus[];
// The share of changes (not creations) whose events S/4HANA never publishes.
const DROP_SHARE = 0.1;
// Batches of a phase's messages, published batchGapMs apart, before the batch of follow-up changes.
const BATCH_COUNT = 4;

const EVENT_TYPES: Record<ChangeKind, string[]> = {
  created: ['Created.v1', 'Changed.v1', 'ItemCreated.v1'],
  status: [
    'Changed.v1',
    'OvrlDelivStsChgd.v1',
    'OvrlSDProcStsChgd.v1',
    'OvrlDlvBlkStsChgd.v1',
    'OvrlRjcnStsChgd.v1',
  ],
  date: ['Changed.v1', 'ItemChanged.v1'],
  'status+date': ['Changed.v1', 'ItemChanged.v1', 'OvrlDelivStsChgd.v1', 'ItmDelivStsChgd.v1'],
  'reference only': ['Changed.v1'],
};
// Raised by S/4HANA for changes the portal does not show: nothing the service reads changes.
const UNCHANGED_TYPES = ['ItmPrftCtrChanged.v1', 'ItmWBSElmntChanged.v1', 'TotCrdtChkStsChgd.v1'];

/** The portal's view of a sandbox state, through the contracts' status rules (portalStatusTable.ts). */
export function expectedPortal(state: SalesOrderState) {
  return {
    portalStatus: expectedStatus(state),
    date: state.requestedDeliveryDate ?? null,
    customerReference: state.customerReference ?? null,
    soldToParty: state.soldToParty ?? null,
  };
}

export function planRun(seed: number, options: PlanOptions): Phase[] {
  const random = createRandom(seed);
  const orders = Array.from({ length: options.orders }, (_, i) => String(8_100_000 + i));
  const returns = Array.from({ length: RETURNS }, (_, i) => String(61_000_000 + i));
  const states = new Map<string, SalesOrderState>();
  const returnHistories = new Map<string, ReturnHistory>();
  const phases: Phase[] = [];
  for (let index = 0; index < options.phases; index++) {
    phases.push(planPhase(index, random.fork(`phase-${index}`), orders, states, options));
    mixReturns(phases[index] as Phase, random.fork(`returns-${index}`), returns, returnHistories);
  }
  return phases;
}

function planPhase(
  index: number,
  random: Random,
  orders: string[],
  states: Map<string, SalesOrderState>,
  options: PlanOptions,
): Phase {
  const changedAt = (minute: number) =>
    new Date(Date.UTC(2026, 10, 30, 8 + index, minute, random.int(0, 59))).toISOString();
  const changes: Phase['changes'] = [];
  const valid: Array<{ identity: string; body: string; copies: number }> = [];
  let eventsOfOtherTypes = 0;
  const addEvent = (type: string, data: Record<string, unknown>) => {
    const id = `${random.hex(8)}-${random.hex(4)}-${random.hex(4)}-${random.hex(4)}-${random.hex(12)}`;
    const body = salesOrderEvent({ type, id, time: changedAt(59), data });
    // Some events reach the queue more than once (a producer retry): same source, id and payload.
    const copies = random.chance(0.35) ? random.int(2, 3) : 1;
    valid.push({ identity: `${S4_SOURCE} ${id}`, body, copies });
  };
  const orderData = (salesOrder: string) => salesOrderData(salesOrder, changedAt(59));

  for (const salesOrder of orders) {
    const current = states.get(salesOrder);
    let kind: ChangeKind | undefined;
    if (current === undefined) kind = 'created';
    else if (random.chance(options.changeShare)) {
      kind = random.pick<ChangeKind>(['status', 'status', 'date', 'status+date', 'reference only']);
    }
    if (kind === undefined) {
      if (random.chance(0.12)) addEvent(random.pick(UNCHANGED_TYPES), orderData(salesOrder));
      continue;
    }
    const next = changeState(kind, salesOrder, current, random, changedAt(random.int(0, 58)));
    states.set(salesOrder, next);
    // Now and then S/4HANA publishes nothing for a change (a Failed event, a deactivated channel): only
    // reconciliation can bring it to the portal.
    const dropped = kind !== 'created' && random.chance(DROP_SHARE);
    changes.push({ kind, state: next, batch: 0, ...(dropped ? { dropped } : {}) });
    if (dropped) continue;
    const types = random.shuffle(EVENT_TYPES[kind]).slice(0, random.int(1, 3));
    for (const type of types) addEvent(type, orderData(salesOrder));
  }
  // The follow-up moves the date on, so its pair differs from every earlier one of the order: it is a real
  // change whether or not the service saw the state before it. Its events go in a last batch of their own.
  const followUps: Array<{ identity: string; body: string; copies: number }> = [];
  const emailed = changes.filter((change) => change.kind !== 'reference only' && !change.dropped);
  const aimed = emailed.length > 0 ? random.pick(emailed) : undefined;
  const followed = changes.filter((change) => change === aimed || (!change.dropped && random.chance(0.25)));
  for (const change of followed) {
    const salesOrder = change.state.salesOrder;
    const next = changeState('date', salesOrder, change.state, random, changedAt(59));
    states.set(salesOrder, next);
    changes.push({ kind: 'date', state: next, batch: BATCH_COUNT });
    const before = valid.length;
    for (const type of random.shuffle(EVENT_TYPES.date).slice(0, random.int(1, 2)))
      addEvent(type, orderData(salesOrder));
    followUps.push(...valid.splice(before));
  }
  for (let i = random.int(1, 3); i > 0; i--) {
    addEvent(OTHER_TYPE, { BusinessPartner: '17100001' });
    eventsOfOtherTypes++;
  }

  const malformed = random
    .shuffle(['truncated JSON', 'invalid order key', 'wrong specversion', 'not JSON'] as const)
    .slice(0, 3)
    .map((what, k) => malformedMessage(what, `malformed-p${index}-${k}-${random.hex(8)}`));

  const copiesOf = (events: typeof valid): PlannedMessage[] =>
    events.flatMap(({ identity, body, copies }) =>
      Array.from({ length: copies }, () => ({
        body,
        contentType: 'application/json',
        identity,
        malformed: undefined,
      })),
    );
  const messages: PlannedMessage[] = [...copiesOf(valid), ...malformed];
  const shuffled = random.shuffle(messages);
  const size = Math.ceil(shuffled.length / BATCH_COUNT);
  const batches = Array.from({ length: BATCH_COUNT }, (_, b) => shuffled.slice(b * size, (b + 1) * size));
  const followUpMessages = random.shuffle(copiesOf(followUps));
  batches.push(followUpMessages);
  messages.push(...followUpMessages);
  valid.push(...followUps);
  const batchGapMs = 1300;
  const windowMs = batchGapMs * batches.length;

  const actions: PlannedAction[] = [];
  for (let k = 2 + (random.chance(0.5) ? 1 : 0); k > 0; k--) {
    actions.push({
      atMs: random.int(100, windowMs + 1500),
      kind: 'kill',
      pick: random.int(0, 99),
      pauseMs: random.int(300, 1500),
      // One kill of each phase lands on the instance running a reconciliation run.
      ...(k === 1 ? { atRun: true } : {}),
    });
  }
  if (index === 2) {
    actions.push({
      atMs: random.int(800, windowMs),
      kind: 'postgres restart',
      pick: 0,
      pauseMs: random.int(800, 2500),
    });
  }
  if (index === 3) {
    actions.push({ atMs: random.int(800, windowMs), kind: 'broker drop', pick: 0, pauseMs: 0 });
  }
  // A database failover in every phase, each aimed at another place that holds a connection, and now and then
  // a second one at any moment.
  const aims = [
    index === 0 ? 'mail' : (LATER_AIMS[(index - 1) % LATER_AIMS.length] as TerminationAim),
    ...(random.chance(0.5) ? (['any'] as const) : []),
  ];
  for (const aim of aims) {
    actions.push({
      // The mail moment needs emails still to come: while the phase still publishes.
      atMs: random.int(100, aim === 'mail' ? windowMs : windowMs + 1500),
      kind: 'terminate sessions',
      pick: 0,
      pauseMs: 0,
      aim,
    });
  }
  actions.sort((a, b) => a.atMs - b.atMs);

  const aimedOrder = aimed?.state.salesOrder;
  // The aimed order's first email is waited for: an outage would only stretch the phase.
  const s4Outages = random
    .shuffle(changes.map((change) => change.state.salesOrder).filter((order) => order !== aimedOrder))
    .slice(0, 3)
    .map((salesOrder) => ({ salesOrder, failingCalls: random.int(4, 9) }));

  const copies = messages.length - malformed.length;
  return {
    index,
    changes,
    aimedOrder,
    returnChanges: [],
    batches,
    batchGapMs,
    identities: valid.map((event) => event.identity),
    malformed: malformed.map((message) => message.malformed as string),
    actions,
    s4Outages,
    returnOutages: [],
    counts: { events: valid.length, copies, duplicateCopies: copies - valid.length, eventsOfOtherTypes },
  };
}

function changeState(
  kind: ChangeKind,
  salesOrder: string,
  current: SalesOrderState | undefined,
  random: Random,
  lastChangeDateTime: string,
): SalesOrderState {
  const base: SalesOrderState = current ?? {
    salesOrder,
    soldToParty: '17100001',
    customerReference: `PO-${random.int(1000, 9999)}`,
    requestedDeliveryDate: isoDay(random.int(0, 30)),
    lastChangeDateTime,
    ...STATUS_FIELDS[random.pick(STATUSES)],
  };
  const next: SalesOrderState = { ...base, lastChangeDateTime };
  if (kind === 'status' || kind === 'status+date') {
    const now = expectedPortal(base).portalStatus;
    Object.assign(next, STATUS_FIELDS[random.pick(STATUSES.filter((status) => status !== now))]);
  }
  if (kind === 'date' || kind === 'status+date') {
    const day = Date.parse(base.requestedDeliveryDate ?? '2026-12-01') + random.int(1, 20) * 86_400_000;
    next.requestedDeliveryDate = new Date(day).toISOString().slice(0, 10);
  }
  if (kind === 'reference only') next.customerReference = `PO-${random.int(10_000, 99_999)}`;
  return next;
}

function isoDay(offset: number): string {
  return new Date(Date.UTC(2026, 11, 1) + offset * 86_400_000).toISOString().slice(0, 10);
}

function malformedMessage(
  what: 'truncated JSON' | 'invalid order key' | 'wrong specversion' | 'not JSON',
  marker: string,
): PlannedMessage {
  const event = (overrides: { data?: unknown; envelope?: Record<string, unknown> }) =>
    salesOrderEvent({ type: 'Changed.v1', id: marker, data: { SalesOrder: '8100000' }, ...overrides });
  const message = (body: string, contentType = 'application/json'): PlannedMessage => ({
    body,
    contentType,
    identity: undefined,
    malformed: marker,
  });
  switch (what) {
    case 'truncated JSON':
      return message(event({}).slice(0, -12));
    case 'invalid order key':
      return message(event({ data: { SalesOrder: "8100000' or '1" } }));
    case 'wrong specversion':
      return message(event({ envelope: { specversion: '0.3' } }));
    case 'not JSON':
      return message(`sales order changed (${marker})`, 'text/plain');
  }
}
