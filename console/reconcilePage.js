// The reconciliation runs (GET /api/reconcile/runs), newest first, with what each read and repaired; an Admin
// starts runs from here (POST /api/reconcile/runs). Runs name their family as the service does (`salesOrder`);
// the page shows the family's label from GET /api/families.
import { get, post } from './api.js';
import { h, table, tag, when } from './dom.js';
import { actionButton, answered, familyList } from './pages.js';

const MODES = ['delta', 'sweep', 'baseline'];

function windowOf(run) {
  if (run.windowFrom === null && run.windowTo === null) return '–';
  return run.windowFrom === null
    ? `everything up to ${when(run.windowTo)}`
    : `${when(run.windowFrom)} to ${when(run.windowTo)}`;
}

function runRow(families, run) {
  const label = families.find((family) => family.name === run.family)?.label ?? run.family;
  return h(
    'tr',
    { 'data-run': run.id, 'data-status': run.status },
    h('td', {}, run.id),
    h('td', {}, label),
    h('td', {}, run.mode),
    h('td', {}, tag(run.status)),
    h('td', {}, windowOf(run)),
    h('td', {}, run.pages),
    h('td', {}, run.rows),
    h('td', {}, run.repairs),
    h('td', {}, run.s4Requests),
    h('td', { class: 'when' }, when(run.startedAt)),
    h('td', { class: 'when' }, when(run.endedAt)),
    h('td', {}, run.error === undefined ? '' : `${run.error.class}: ${run.error.text}`),
  );
}

/** An Admin's form: a family (or every family) and a mode; the answer re-renders the page above the list. */
function startForm(families, reload) {
  const family = h(
    'select',
    { name: 'family', 'aria-label': 'Family' },
    h('option', { value: '' }, 'every family'),
    ...families.map(({ name, label }) => h('option', { value: name }, label)),
  );
  const mode = h(
    'select',
    { name: 'mode', 'aria-label': 'Mode' },
    ...MODES.map((name) => h('option', { value: name }, name)),
  );
  const start = actionButton(
    'Start a run',
    async () => {
      const body = { mode: mode.value, ...(family.value === '' ? {} : { family: family.value }) };
      const { runs } = await post('reconcile/runs', body);
      return `started: run ${runs.join(', ')}`;
    },
    reload,
  );
  return h('div', { class: 'actions' }, family, mode, start);
}

export async function reconcilePage(main, me, message) {
  const [families, { runs }] = await Promise.all([familyList(), get('reconcile/runs')]);
  const reload = (answer) => reconcilePage(main, me, answer);
  const rows = runs.map((run) => runRow(families, run));
  main.replaceChildren(
    h('h2', {}, 'Reconciliation runs'),
    ...answered(message),
    ...(me.admin ? [startForm(families, reload)] : []),
    rows.length === 0
      ? h('p', {}, 'No reconciliation runs.')
      : table(
          [
            'Run',
            'Family',
            'Mode',
            'Status',
            'Window',
            'Pages',
            'Rows',
            'Repairs',
            'S/4HANA requests',
            'Started',
            'Ended',
            'Error',
          ],
          rows,
        ),
  );
}
