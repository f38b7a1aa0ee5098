// Every request goes to this page's own origin (relative URLs); the dashboard never contacts another host.

const TOKEN_KEY = 'pega.admin.token';

/**
 * A read; throws on any answer but 2xx, with the answer's status on the error. A 403 means this browser is outside the
 * server's read rule for admin views (off loopback, the admin token): the pages say how to get in.
 */
export async function getJson(path) {
  const response = await fetch(path, { headers: authHeaders(), cache: 'no-store' });
  if (!response.ok) {
    const error = new Error(`${path}: HTTP ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return response.json();
}

/**
 * A mutation; resolves to {ok, status, body} whatever the answer, so the page can show a refusal's own text. The
 * X-Pega-Request header makes it a request no page of another site can send: the server refuses mutations without it.
 */
export async function post(path) {
  const headers = { ...authHeaders(), 'X-Pega-Request': '1' };
  const response = await fetch(path, { method: 'POST', headers, cache: 'no-store' });
  const text = await response.text();
  let body = text;
  try { body = JSON.parse(text); } catch (e) { /* the refusal is plain text */ }
  return { ok: response.ok, status: response.status, body };
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value); else sessionStorage.removeItem(TOKEN_KEY);
}

function authHeaders() {
  const t = token();
  return t ? { Authorization: `Bearer ${t}` } : {};
}
