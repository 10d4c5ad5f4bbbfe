// An order's or a return's timeline (GET /api/orders/{salesOrder}/timeline, GET /api/returns/{customerReturn}/
// timeline) told as a story: one entry per arrival, email step and portal push, in time order, each with what it
// came to and why. A family's words (its noun, its types' prefix, how its state reads) come from GET /api/families.

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

function notificationLine(notification) {
  const verdict = notification.realChange ? 'real change, email queued' : 'no real change, no email';
  return `Notification: ${verdict} (${notification.reason})`;
}

function arrivalEntries(family, arrival) {
  const eventName = (a) => eventNameOf(family, a);
  const by = arrival.channel === null ? '' : ` by ${arrival.channel}`;
  const entries = [];
  if (arrival.outcome === 'in_progress') {
    entries.push({
      at: arrival.receivedAt,
      tag: 'in_progress',
      title: `${eventName(arrival)} arrived${by}, not processed yet`,
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
      title: `${eventName(arrival)} arrived${by}, released for redelivery`,
      details: [`${arrival.attempts} deliveries so far; last error: ${arrival.reason ?? 'none recorded'}`],
    });
    return entries;
  }
  if (arrival.attempts !== null && arrival.attempts > 1) {
    entries.push({
      at: arrival.receivedAt,
      tag: 'released',
      title: `${eventName(arrival)} arrived${by}, released ${arrival.attempts - 1}× before it completed`,
      details: [`last error: ${arrival.reason ?? 'none recorded'}`],
    });
  }
  const details = [];
  if (arrival.read !== null) details.push(readLine(family, arrival.read));
  if (arrival.notification !== null) details.push(notificationLine(arrival.notification));
  const titles = {
    applied: `${eventName(arrival)} arrived${by} and was applied`,
    stale: `${eventName(arrival)} arrived${by}: the read was older than the state held`,
    not_found: `${eventName(arrival)} arrived${by}: the ${family.noun} was not found in S/4HANA`,
    not_warranty_case: `${eventName(arrival)} arrived${by}: the return is not a warranty case, nothing done`,
    ignored: `${eventName(arrival)} arrived${by}: a type the portal ignores`,
    duplicate: `${eventName(arrival)} arrived again${by}: a duplicate, acknowledged, nothing done`,
    dead_lettered: `${eventName(arrival)} arrived${by} and was dead-lettered`,
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
    title: titles[arrival.outcome] ?? `${eventName(arrival)}: ${arrival.outcome}`,
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

/** The timeline of `family` as story entries { at, tag, title, details, deadLetterId? }, oldest first. */
export function storyOf(timeline, family) {
  const entries = [
    ...timeline.arrivals.flatMap((arrival) => arrivalEntries(family, arrival)),
    ...timeline.emails.map((step) => emailEntry(family, step)),
    ...(timeline.portalPush === null ? [] : [pushEntry(family, timeline.portalPush)]),
  ];
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => new Date(a.entry.at) - new Date(b.entry.at) || a.index - b.index)
    .map(({ entry }) => entry);
}
