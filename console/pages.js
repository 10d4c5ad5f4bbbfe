// The console's pages. Each reads the admin API and renders; an action button appears only for a caller whose
// token grants Admin, and every action is a POST whose answer re-renders the page.
import { get, post } from './api.js';
import { h, table, tag, when } from './dom.js';
import { stateOf, storyOf } from './story.js';

/**
 * A button that runs `action` once; `done` re-renders the page with the action's answer, which a failure shows
 * beside the button instead.
 */
export function actionButton(label, action, done) {
  const status = h('span', { class: 'detail', role: 'status' });
  const button = h('button', { type: 'button' }, label);
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      await done(await action());
    } catch (err) {
      status.textContent = ` ${err.message}`;
      button.disabled = false;
    }
  });
  return h('span', {}, button, status);
}

/** The answer of the last action, above the page it changed: none or one element, to spread. */
export function answered(message) {
  return message === undefined ? [] : [h('p', { class: 'notice', role: 'status' }, message)];
}

let families;

/** The event families as the service describes them (GET /api/families), asked once. */
export async function familyList() {
  families ??= await get('families');
  return families;
}

/**
 * The search: an order or a return (the toggle) by its key, whose timeline the page then tells as a story. Only
 * the family's page and the key travel in the hash: #/orders/1000473, #/returns/60000000.
 */
export async function searchPage(main, pageName, key) {
  const all = await familyList();
  const named = (name) => all.find((candidate) => candidate.page === name) ?? all[0];
  let family = named(pageName);
  const input = h('input', { name: 'key', value: key ?? '', required: true });
  const kind = h(
    'select',
    { name: 'family', 'aria-label': 'Search for' },
    ...all.map(({ page, label }) => h('option', { value: page, selected: page === family.page }, label)),
  );
  const describe = () => {
    input.setAttribute('aria-label', family.label);
    input.setAttribute('placeholder', `${family.label}, e.g. ${family.example}`);
    input.setAttribute('pattern', family.keyPattern);
  };
  describe();
  kind.addEventListener('change', () => {
    family = named(kind.value);
    describe();
  });
  const form = h('form', { role: 'search' }, kind, input, h('button', { type: 'submit' }, 'Show timeline'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = `#/${kind.value}/${encodeURIComponent(input.value.trim())}`;
  });
  main.replaceChildren(h('h2', {}, 'Orders and returns'), form);
  if (key === undefined) return;
  if (!new RegExp(family.keyPattern).test(key)) {
    main.append(h('p', { class: 'error' }, `${key} is not a ${family.noun} number.`));
    return;
  }
  const timeline = await get(`${family.lookup.replace(/^\/api\//, '')}/${key}/timeline`);
  const items = storyOf(timeline, family).map((entry) =>
    h(
      'li',
      { 'data-tag': entry.tag },
      h('span', { class: 'when' }, when(entry.at)),
      tag(entry.tag),
      h(
        'div',
        {},
        h('div', {}, entry.title),
        ...entry.details.map((line) => h('div', { class: 'detail' }, line)),
        entry.deadLetterId
          ? h('a', { href: `#/dead-letters/${entry.deadLetterId}` }, `dead letter ${entry.deadLetterId}`)
          : null,
      ),
    ),
  );
  main.append(
    h('h3', {}, `Timeline of ${family.noun} ${timeline[family.param]}`),
    h('ol', { class: 'story' }, ...items),
  );
}

export async function deadLettersPage(main) {
  const page = await get('dead-letters?limit=200');
  const rows = page.items.map((letter) =>
    h(
      'tr',
      { 'data-id': letter.id },
      h('td', {}, h('a', { href: `#/dead-letters/${letter.id}` }, letter.id)),
      h('td', { class: 'when' }, when(letter.receivedAt)),
      h('td', {}, letter.channel),
      h('td', {}, letter.reason),
      h('td', {}, letter.eventId ?? '–'),
      h('td', {}, letter.replayedAt === null ? tag('dead_lettered') : tag('replayed')),
    ),
  );
  main.replaceChildren(
    h('h2', {}, 'Dead letters'),
    rows.length === 0
      ? h('p', {}, 'No dead letters.')
      : table(['Id', 'Received', 'Channel', 'Reason', 'Event id', 'State'], rows),
  );
}

export async function deadLetterPage(main, id, me, message) {
  const letter = await get(`dead-letters/${id}`);
  const state =
    letter.replayedAt === null
      ? h('p', {}, tag('dead_lettered'), ' not replayed')
      : h('p', {}, tag('replayed'), ` ${when(letter.replayedAt)}`);
  main.replaceChildren(
    h('h2', {}, `Dead letter ${letter.id}`),
    ...answered(message),
    state,
    table(
      ['Field', 'Value'],
      [
        ['Reason', letter.reason],
        ['Channel', letter.channel],
        ['Received', when(letter.receivedAt)],
        ['Source', letter.source ?? '–'],
        ['Event id', letter.eventId ?? '–'],
        ['Content type', letter.contentType ?? '–'],
      ].map(([name, value]) => h('tr', {}, h('th', {}, name), h('td', {}, value))),
    ),
  );
  if (letter.replayedAt === null && me.admin) {
    main.append(
      actionButton(
        'Replay',
        async () => {
          const result = await post(`dead-letters/${id}/replay`);
          return result.outcome === 'accept'
            ? `replayed: ${result.result}`
            : `refused again: ${result.reason}`;
        },
        (answer) => deadLetterPage(main, id, me, answer),
      ),
    );
  }
  main.append(
    h('h3', {}, `Body (${letter.bodyEncoding})`),
    h('pre', {}, letter.body),
    h('h3', {}, 'Attributes'),
    h('pre', {}, JSON.stringify(letter.attributes, null, 2)),
    h('h3', {}, 'Transport headers'),
    h('pre', {}, JSON.stringify(letter.headers, null, 2)),
  );
}

/** The family of a listed row, by the page its lookup names (`orders/1000473`); undefined for none known. */
function familyOf(families, item) {
  return item.lookup === null
    ? undefined
    : families.find((family) => family.page === item.lookup.split('/')[0]);
}

/** What a listed row is about: its family's label and its key. */
function aboutOf(families, item) {
  return `${familyOf(families, item)?.label ?? item.family} ${item.key}`;
}

/**
 * A row of an outbox item that needs attention: its key cells, what it says, and for an Admin the Retry of exactly
 * this row (the list gives its path).
 */
function attentionRow(me, families, attributes, keyCells, item, what, reload) {
  const family = familyOf(families, item);
  return h(
    'tr',
    { ...attributes, 'data-family': item.family, 'data-key': item.key },
    ...keyCells,
    h('td', {}, family === undefined ? JSON.stringify(item.content) : stateOf(family, item.content)),
    h('td', {}, tag(item.state === 'parked' ? 'parked' : 'failing')),
    h('td', {}, item.attempts),
    h('td', {}, item.lastError ?? '–'),
    h(
      'td',
      {},
      me.admin && item.retry !== null
        ? actionButton('Retry', async () => `${what} retried: ${(await post(item.retry)).state}`, reload)
        : null,
    ),
  );
}

export async function parkedPage(main, me, message) {
  const [families, mail, pushes] = await Promise.all([
    familyList(),
    get('mail?limit=200'),
    get('portal-pushes?limit=200'),
  ]);
  const reload = (answer) => parkedPage(main, me, answer);
  const about = (item) =>
    h(
      'td',
      {},
      item.lookup === null
        ? aboutOf(families, item)
        : h('a', { href: `#/${item.lookup}` }, aboutOf(families, item)),
    );
  const mailRows = mail.items.map((item) =>
    attentionRow(
      me,
      families,
      { 'data-mail': item.id },
      [h('td', {}, item.id), about(item)],
      item,
      `Email ${item.id}`,
      reload,
    ),
  );
  const pushRows = pushes.items.map((item) =>
    attentionRow(
      me,
      families,
      { 'data-push': '' },
      [about(item)],
      item,
      `Portal push of ${aboutOf(families, item)}`,
      reload,
    ),
  );
  main.replaceChildren(
    ...answered(message),
    h('h2', {}, 'Parked emails'),
    mailRows.length === 0
      ? h('p', {}, 'No email needs attention.')
      : table(['Id', 'About', 'Says', 'State', 'Attempts', 'Last error', ''], mailRows),
    h('h2', {}, 'Parked portal pushes'),
    pushRows.length === 0
      ? h('p', {}, 'No portal push needs attention.')
      : table(['About', 'State to push', 'State', 'Attempts', 'Last error', ''], pushRows),
  );
}

function figure(label, value) {
  return h('div', { class: 'figure' }, h('strong', {}, value), label);
}

function age(seconds) {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

export async function summaryPage(main) {
  const summary = await get('summary');
  const { mail, portalPush } = summary.backlog;
  main.replaceChildren(
    h('h2', {}, 'Summary'),
    h(
      'div',
      { class: 'figures' },
      ...Object.entries(summary.ordersByPortalStatus).map(([status, count]) =>
        figure(`orders ${status}`, count),
      ),
    ),
    h(
      'div',
      { class: 'figures' },
      figure('emails pending', summary.outboxByState.pending),
      figure('emails parked', summary.outboxByState.parked),
      figure('emails sent (kept)', summary.outboxByState.sent),
      figure('oldest pending email', age(mail.oldestPendingSeconds)),
      figure('portal pushes pending', portalPush.pending),
      figure('portal pushes parked', portalPush.parked),
      figure('oldest pending push', age(portalPush.oldestPendingSeconds)),
      figure('dead letters not replayed', summary.deadLettersNotReplayed),
    ),
    h('h3', {}, 'Open orders per sold-to party'),
    table(
      ['Sold-to party', 'Open orders'],
      summary.openOrdersBySoldToParty.map((row) =>
        h('tr', {}, h('td', {}, row.soldToParty ?? '–'), h('td', {}, row.openOrders)),
      ),
    ),
  );
}
