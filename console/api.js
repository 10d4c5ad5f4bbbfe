// The admin API as the console calls it: same origin, the session cookie on BTP (the approuter adds the bearer
// token), nothing locally. Errors are classes, so a page can say "not signed in" plainly.

export class NotSignedIn extends Error {}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function answer(response) {
  const body = await response.json().catch(() => ({}));
  if (response.status === 401) throw new NotSignedIn('not signed in');
  if (!response.ok) throw new ApiError(response.status, body.message ?? `HTTP ${response.status}`);
  return body;
}

export async function get(path) {
  return answer(await fetch(`/api/${path}`, { headers: { accept: 'application/json' } }));
}

// The approuter guards state-changing requests with a CSRF token it hands out on a GET asking for one; the
// service ignores the header, so the same call works locally.
async function csrfToken() {
  const response = await fetch('/api/me', { headers: { 'x-csrf-token': 'fetch' } });
  if (response.status === 401) throw new NotSignedIn('not signed in');
  return response.headers.get('x-csrf-token');
}

/** An action: a POST, its key in the path, and what it asks for (`body`) as JSON if any. */
export async function post(path, body) {
  const token = await csrfToken();
  const headers = { accept: 'application/json' };
  if (token !== null) headers['x-csrf-token'] = token;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const init = { method: 'POST', headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) };
  return answer(await fetch(`/api/${path}`, init));
}
