// The console's entry: asks once what the caller may do (GET /api/me), then renders the page the hash names.
// Only keys travel in the hash (#/orders/1000473, #/returns/60000000, #/dead-letters/12, #/reconcile).
import { ApiError, get, NotSignedIn } from './api.js';
import { h } from './dom.js';
import { deadLetterPage, deadLettersPage, parkedPage, searchPage, summaryPage } from './pages.js';
import { reconcilePage } from './reconcilePage.js';

const main = document.getElementById('main');
const who = document.getElementById('who');
let me;

async function caller() {
  if (me === undefined) {
    const { scopes } = await get('me');
    me = { scopes, admin: scopes.includes('Admin') };
    who.textContent = me.admin ? 'signed in: Viewer, Admin' : 'signed in: Viewer (read only)';
  }
  return me;
}

async function render() {
  const [, page, key] = location.hash.split('/');
  try {
    const current = await caller();
    if (page === 'dead-letters' && key !== undefined)
      await deadLetterPage(main, decodeURIComponent(key), current);
    else if (page === 'dead-letters') await deadLettersPage(main);
    else if (page === 'parked') await parkedPage(main, current);
    else if (page === 'summary') await summaryPage(main);
    else if (page === 'reconcile') await reconcilePage(main, current);
    else await searchPage(main, page, key === undefined ? undefined : decodeURIComponent(key));
  } catch (err) {
    if (err instanceof NotSignedIn) {
      me = undefined;
      who.textContent = 'not signed in';
      main.replaceChildren(
        h('p', { class: 'notice', role: 'alert' }, 'Not signed in. Sign in and reload the page.'),
      );
    } else if (err instanceof ApiError && err.status === 403) {
      main.replaceChildren(
        h('p', { class: 'notice', role: 'alert' }, 'Signed in, but without the Viewer role.'),
      );
    } else if (err instanceof ApiError && err.status === 404) {
      main.append(h('p', { class: 'notice', role: 'alert' }, err.message));
    } else {
      main.replaceChildren(h('p', { class: 'error', role: 'alert' }, `The admin API failed: ${err.message}`));
    }
  }
}

window.addEventListener('hashchange', render);
render();
