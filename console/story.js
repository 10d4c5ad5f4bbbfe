// An order's or a return's timeline (GET /api/orders/{salesOrder}/timeline, GET /api/returns/{customerReturn}/
// timeline) told as a story: one entry per arrival, email step and portal push, in time order, each with what it
// came to and why. A document reconciliation found is told as "found by reconciliation", with its run, window and
// S/4HANA stamp. A family's words (its noun, its types' prefix, how its state reads) come from GET /api/families.
import { when } from './dom.js';

/**
 * A state as its family's words tell it (GET /api/families: `state`, pairs of a value's name and its words),
 * e.g. "InProcess, requested delivery 2027-01-12" or "case status Open".
 */
export function stateOf(family, values) {
  return family.state
    .map(([field, words]) =>
      words === '' ? `${values[field] ?? 'none'}` : `${words} ${values[field] ?? 'none'}`,
    )
    .join(', ');
}

function eventNameOf(family, arrival) {
  const type = arrival.type === null ? 'event' : arrival.type.replace(family.typePrefix, '');
  return `${type} ${arrival.id ?? '(no id)'}`;
}

function readLine(family, read) {
  return `S/4HANA read: ${stateOf(family, read)}, LastChangeDateTime ${read.lastChangeDateTime ?? 'none'}`;
}

function notificationLine(notification, run) {
  // A baseline keeps the ledger so the first real change is a change, and sends nothing itself.
  if (run?.mode === 'baseline') return 'Notification: the baseline recorded it, no email';
  const verdict = notification.realChange ? 'real change, email queued' : 'no real change, no email';
  return `Notification: ${verdict} (${notification.reason})`;
}

/** What a reconciled arrival names: its run and window (a duplicate seen by a second window has none) and stamp. */
function reconcileLines(arrival) {
  const lines = [];
  if (arrival.run !== undefined) {
    const { id, mode, windowFrom, windowTo } = arrival.run;
    const window =
      windowFrom === null ? `everything up to ${when(windowTo)}` : `${when(windowFrom)} to ${when(windowTo)}`;
    lines.push(`Reconciliation run ${id} (${mode}), window ${window}`);
  }
  if (arrival.stamp !== undefined) lines.push(`S/4HANA stamp ${arrival.stamp}`);
  return lines;
}

function arrivalEntries(family, arrival) {
  const reconciled = arrival.channel === 'reconcile';
  const by = arrival.channel === null ? '' : ` by ${arrival.channel}`;
  // A reconciled document is no event: it is named by how it was found, not by a type and an id.
  const arrived = reconciled ? 'found by reconciliation' : `${eventNameOf(family, arrival)} arrived${by}`;
  const again = reconciled
    ? 'found by reconciliation again'
    : `${eventNameOf(family, arrival)} arrived again${by}`;
  const entries = [];
  if (arrival.outcome === 'in_progress') {
    entries.push({
      at: arrival.receivedAt,
      tag: 'in_progress',
      title: `${arrived}, not processed yet`,
      details: [
        `${arrival.attempts} deliveries so far: being handled now, or the process handling it stopped`,
      ],
    });
    return entries;
  }
  if (arrival.outcome === 'released') {
    entries.push({
      at: arrival.receivedAt,
      tag: 'released',
      title: `${arrived}, released for redelivery`,
      details: [`${arrival.attempts} deliveries so far; last error: ${arrival.reason ?? 'none recorded'}`],
    });
    return entries;
  }
  if (arrival.attempts !== null && arrival.attempts > 1) {
    entries.push({
      at: arrival.receivedAt,
      tag: 'released',
      title: `${arrived}, released ${arrival.attempts - 1}× before it completed`,
      details: [`last error: ${arrival.reason ?? 'none recorded'}`],
    });
  }
  const details = reconciled ? reconcileLines(arrival) : [];
  if (arrival.read !== null) details.push(readLine(family, arrival.read));
  if (arrival.notification !== null) details.push(notificationLine(arrival.notification, arrival.run));
  const titles = {
    applied: `${arrived} and was applied`,
    stale: `${arrived}: the read was older than the state held`,
    not_found: `${arrived}: the ${family.noun} was not found in S/4HANA`,
    not_warranty_case: `${arrived}: the return is not a warranty case, nothing done`,
    ignored: `${arrived}: a type the portal ignores`,
    duplicate: `${again}: a duplicate, acknowledged, nothing done`,
    dead_lettered: `${arrived} and was dead-lettered`,
  };
  if (arrival.outcome === 'dead_lettered') {
    details.push(`reason: ${arrival.reason}`);
    details.push(
      arrival.replayedAt === null ? 'not replayed' : `replayed ${new Date(arrival.replayedAt).toISOString()}`,
    );
  }
  entries.push({
    at: arrival.processedAt ?? arrival.receivedAt,
    tag: arrival.outcome,
    title: titles[arrival.outcome] ?? `${arrived}: ${arrival.outcome}`,
    details,
    deadLetterId: arrival.deadLetterId,
  });
  return entries;
}

function emailEntry(family, step) {
  const state = stateOf(family, step);
  const titles = {
    queued: `Email queued (${step.change ?? 'state'}): ${state}`,
    sent: `Email sent, Message-ID ${step.messageId}`,
    parked: 'Email parked',
    failing: 'Email failing, still retried',
    resent: 'Email put back in line by an operator',
  };
  return {
    at: step.at,
    tag: step.step,
    title: titles[step.step],
    details: step.reason === null ? [] : [`reason: ${step.reason}`],
  };
}

function pushEntry(family, push) {
  const state = stateOf(family, push);
  const details = [`Idempotency-Key ${push.pushId}, ${push.attempts} attempt(s)`];
  if (push.reason !== null) details.push(`reason: ${push.reason}`);
  if (push.retriedAt !== null)
    details.push(`retried by an operator after: ${push.retriedError ?? push.retriedState}`);
  return {
    at: push.doneAt ?? push.pendingSince,
    tag: push.step,
    title: `Portal push ${push.step}: ${state}`,
    details,
  };
}

/** An instant of a stamp or a read (`2026-12-07T10:00:00.1234567Z`), to the millisecond a Date holds. */
function stampMs(text) {
  return text === undefined || text === null ? Number.NaN : Date.parse(text.replace(/(\.\d{3})\d+/, '$1'));
}

/**
 * An event that came after reconciliation had applied its document and read nothing newer: its news was already
 * on the portal, so it changed nothing.
 */
function lateAfter(arrival, foundMs) {
  return (
    arrival.outcome === 'applied' &&
    arrival.notification?.realChange === false &&
    stampMs(arrival.read?.lastChangeDateTime) <= foundMs
  );
}

function staleEntry(entry) {
  return {
    ...entry,
    tag: 'stale',
    title: `${entry.title.replace(/ and was applied$/, '')}: late, reconciliation had already found this state`,
  };
}

/** The timeline of `family` as story entries { at, tag, title, details, deadLetterId? }, oldest first. */
export function storyOf(timeline, family) {
  let found;
  const arrivals = timeline.arrivals.flatMap((arrival) => {
    const entries = arrivalEntries(family, arrival);
    if (arrival.channel === 'reconcile' && arrival.outcome === 'applied') found = stampMs(arrival.stamp);
    else if (found !== undefined && lateAfter(arrival, found)) entries.push(staleEntry(entries.pop()));
    return entries;
  });
  const entries = [
    ...arrivals,
    ...timeline.emails.map((step) => emailEntry(family, step)),
    ...(timeline.portalPush === null ? [] : [pushEntry(family, timeline.portalPush)]),
  ];
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => new Date(a.entry.at) - new Date(b.entry.at) || a.index - b.index)
    .map(({ entry }) => entry);
}
