// The dashboard shell: asks /api/admin/info which app serves it (pega-server or pega-metaserver), shows that app's
// pages, and re-renders the current page every refresh_ms. Countdowns tick every second between refreshes.

import { getJson } from './api.js';
import { esc } from './format.js';
import * as pages from './pages.js';

const SERVER_PAGES = [
  ['overview', 'Overview', pages.overview],
  ['leases', 'Leases', pages.leases],
  ['transfer', 'Transfer', pages.transfer],
  ['ssd', 'SSD', pages.ssd],
  ['cluster', 'Cluster', pages.metaserverLink],
  ['actions', 'Actions', pages.actions],
];
const METASERVER_PAGES = [['cluster', 'Cluster', pages.cluster]];

const NEEDS_TOKEN = `<div class="off" id="needs-token">This view needs the admin token: enter it
  (<code>pega.admin.token</code>) on the <a href="#actions">Actions</a> page, or bind the HTTP listener to loopback
  (<code>server.address=127.0.0.1</code>) and open the page from the host.</div>`;

let routes = SERVER_PAGES;
let refreshMs = 2000;
let timer = null;
let generation = 0;

async function start() {
  let info;
  try {
    info = await getJson('api/admin/info');
  } catch (e) {
    document.getElementById('page').innerHTML = `<div class="off">Admin API unreachable: ${esc(e.message)}</div>`;
    return;
  }
  refreshMs = info.refresh_ms || refreshMs;
  routes = info.app === 'pega-metaserver' ? METASERVER_PAGES : SERVER_PAGES;
  document.getElementById('app-name').textContent = `${info.app} ${info.version}`;
  window.addEventListener('hashchange', () => show(true));
  setInterval(pages.tick, 1000);
  show(true);
}

function current() {
  const name = location.hash.replace(/^#\/?/, '');
  return routes.find((r) => r[0] === name) || routes[0];
}

async function show(navigated) {
  const [name, , render] = current();
  const mine = ++generation;
  clearTimeout(timer);
  document.getElementById('nav').innerHTML = routes
    .map(([n, label]) => `<a href="#${n}" id="nav-${n}" class="${n === name ? 'active' : ''}">${label}</a>`)
    .join('');
  const page = document.getElementById('page');
  try {
    await render(page, { navigated });
    if (mine !== generation) return;
    page.dataset.page = name;
    page.dataset.rendered = String(Date.now());
    document.getElementById('status').textContent = `updated ${new Date().toLocaleTimeString('en-GB')}`;
  } catch (e) {
    if (mine !== generation) return;
    document.getElementById('status').textContent = `refresh failed: ${e.message}`;
    if (e.status === 403) {
      // outside the server's read rule: say how to get in instead of leaving a blank or stale page
      page.innerHTML = NEEDS_TOKEN;
      page.dataset.page = name;
    }
  }
  if (mine === generation) {
    timer = setTimeout(() => show(false), refreshMs);
  }
}

start();
