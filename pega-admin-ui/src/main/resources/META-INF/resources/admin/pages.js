// One function per page: fetch its admin documents, render them into the page element. Values from the server are
// escaped (esc) before they reach innerHTML.

import { getJson, post, setToken, token } from './api.js';
import { deltas, lineChart } from './chart.js';
import { ago, bytes, count, counted, duration, esc, expiresIn, micros, percent, rate } from './format.js';

const TIERS = [
  ['ram', 'RAM', 'var(--ram)'],
  ['ssd', 'SSD', 'var(--ssd)'],
  ['rdma', 'remote', 'var(--rdma)'],
  ['miss', 'miss', 'var(--miss)'],
];

function usageBar(used, capacity, cls = '') {
  const pct = capacity > 0 ? Math.min(100, (100 * used) / capacity) : 0;
  return `<div class="bar ${cls}"><span style="width:${pct.toFixed(1)}%"></span></div>`;
}

function off(id, text, hint) {
  return `<div class="off" id="${id}"><div class="big">${esc(text)}</div>${hint ? `<p>${hint}</p>` : ''}</div>`;
}

function pill(state) {
  const s = String(state).toLowerCase();
  const cls = ['established', 'open', 'up', 'live', 'healthy'].includes(s)
    ? 'ok'
    : ['connecting', 'opening', 'stale', 'closing'].includes(s) ? 'warn' : 'bad';
  return `<span class="pill ${cls}">${esc(state)}</span>`;
}

// The connector generations (docs/compatibility.md): a short label for what each changed on the wire, and its
// releases. An instance's generation, fixed by its first registration, says how the server reads its requests.
const GENERATIONS = {
  G0: ['reference wire', 'v0.22.4–0.22.5'],
  G1: ['sends its version', '0.22.6–0.22.8'],
  G2: ['server-sealed layers', '0.22.9–0.23.6'],
  G3: ['grouped Load', '0.23.7+'],
};

function connectorVersion(i) {
  return i.client_version === '<missing>'
    ? '<span class="muted" title="v0.22.4 and 0.22.5 send no client_version">v0.22.4 (no version sent)</span>'
    : `<code>${esc(i.client_version)}</code>`;
}

function generation(i) {
  const [label, releases] = GENERATIONS[i.generation] || ['', ''];
  return `<span title="${esc(releases)}">${esc(i.generation)}${label ? ` ${esc(label)}` : ''}</span>`;
}

// G0 and G1 send num_layers; a later generation's layer space is the union of what world_size workers registered,
// one device each, and data calls wait until it is sealed.
function layerSpace(i) {
  if (i.generation === 'G0' || i.generation === 'G1') return '<span class="muted">num_layers sent</span>';
  return i.sealed
    ? '<span class="pill ok">sealed</span>'
    : `<span class="pill warn">waiting: ${i.devices.length}/${i.world_size} workers registered</span>`;
}

// Storage groups: one for a dense model; a hybrid one (attention plus recurrent state, pegaflow-llm 0.23.11+) keys and
// seals each group apart. The cell lists the layers of each group.
function groups(i) {
  const counts = i.group_layers || [];
  if (!i.hybrid) return '<span class="muted">1</span>';
  return `<span class="pill ok" title="layers per storage group">hybrid</span> `
    + counts.map((n, g) => `g${g}: ${counted(n, 'layer')}`).join(', ');
}

// ------------------------------------------------------------------ overview

export async function overview(page) {
  const [o, instances] = await Promise.all([getJson('api/admin/overview'), getJson('api/admin/instances')]);
  const p = o.pool;
  const c = o.cache;
  const requested = Object.values(o.tiers).reduce((a, b) => a + b, 0);
  const tierCells = TIERS.filter(([k]) => k in o.tiers)
    .map(([k, label]) => {
      const share = requested > 0 ? o.tiers[k] / requested : null;
      const recent = o.rates.hit_ratio[k];
      return `<tr data-tier="${k}"><td>${label}</td><td class="num">${count(o.tiers[k])}</td>`
        + `<td class="num">${percent(share)}</td><td class="num">${recent == null ? '–' : percent(recent)}</td></tr>`;
    })
    .join('');
  const hitSeries = TIERS.filter(([k]) => k in o.tiers).map(([k, label, color]) => ({
    name: label,
    color,
    points: deltas(o.history, (a, b) => {
      const total = Object.keys(b.tiers).reduce((s, t) => s + b.tiers[t] - (a.tiers[t] || 0), 0);
      return total > 0 ? (b.tiers[k] - (a.tiers[k] || 0)) / total : null;
    }),
  }));
  const throughput = [
    { name: 'save', color: 'var(--save)', points: deltas(o.history, (a, b, s) => (b.save_bytes - a.save_bytes) / s) },
    { name: 'load', color: 'var(--load)', points: deltas(o.history, (a, b, s) => (b.load_bytes - a.load_bytes) / s) },
  ];
  const rows = instances.instances
    .map((i) => {
      const devices = i.devices
        .map((d) => `dev ${d.device_id} (tp ${d.tp_rank}, pp ${d.pp_rank}): ${counted(d.layers, 'layer')}, ${esc(d.layout)}, `
          + `${counted(d.num_blocks, 'block')} × ${bytes(d.bytes_per_block)}`)
        .join('<br>');
      return `<tr data-instance="${esc(i.id)}"><td><code>${esc(i.id)}</code>${i.detached ? ' <span class="pill warn">detached</span>' : ''}</td>`
        + `<td>${esc(i.namespace)}</td><td class="num">${i.tp_size} / ${i.world_size}</td><td class="num">${i.num_layers}</td>`
        + `<td class="connector">${connectorVersion(i)}</td><td class="generation">${generation(i)}</td>`
        + `<td class="layer-space">${layerSpace(i)}</td><td class="groups">${groups(i)}</td>`
        + `<td class="num">${i.leases}</td><td>${devices || '<span class="muted">no device yet</span>'}</td></tr>`;
    })
    .join('');
  page.innerHTML = `<h2>Overview</h2>
  <div class="grid">
    <div class="card"><h3>Pinned pool</h3>
      <div class="big" id="pool-used">${bytes(p.used_bytes)} / ${bytes(p.capacity_bytes)}</div>
      ${usageBar(p.used_bytes, p.capacity_bytes)}
      <div class="muted">largest free run ${bytes(p.largest_free_bytes)} · ${counted(p.outstanding_allocations, 'allocation')} · ${counted(p.alloc_failures, 'failure')}</div></div>
    <div class="card"><h3>Blocks cached</h3>
      <div class="big" id="blocks">${count(c.resident_blocks)}</div>
      <div class="muted">${bytes(c.resident_bytes)} resident · ${bytes(c.inflight_bytes)} waiting for slots · ${count(c.evictions)} evicted</div></div>
    <div class="card"><h3>Throughput</h3>
      <div class="big"><span id="save-rate">${rate(o.rates.save_bytes_per_sec)}</span> save</div>
      <div class="big"><span id="load-rate">${rate(o.rates.load_bytes_per_sec)}</span> load</div>
      <div class="muted">over the last ${duration(o.rates.window_ms)}</div></div>
    <div class="card"><h3>Clients</h3>
      <div class="big" id="instances">${count(o.instances)} ${o.instances === 1 ? 'instance' : 'instances'}</div>
      <div class="muted">${counted(o.sessions, 'session')} · <a href="#leases">${counted(o.leases_active, 'live lease')}</a>${o.detached_instances ? ` · ${o.detached_instances} detached` : ''}</div></div>
  </div>
  <div class="grid">
    <div class="card"><h3>Hit rate by tier</h3>${lineChart(hitSeries, { yMax: 1, yFormat: (v) => percent(v), label: 'hit rate by tier' })}
      <table><tr><th>tier</th><th class="num">blocks</th><th class="num">since start</th><th class="num">last interval</th></tr>${tierCells}</table></div>
    <div class="card"><h3>Save / load throughput</h3>${lineChart(throughput, { yFormat: rate, label: 'throughput' })}</div>
  </div>
  <h3>Instances</h3>
  ${rows ? `<table id="instance-table"><tr><th>instance</th><th>namespace</th><th class="num">tp / world</th><th class="num">layers</th><th>connector</th><th>generation</th><th>layer space</th><th>groups</th><th class="num">leases</th><th>devices</th></tr>${rows}</table>`
    : '<div class="off" id="no-instances">No instance registered</div>'}`;
}

// ------------------------------------------------------------------ leases

export async function leases(page) {
  const l = await getJson('api/admin/leases');
  const fetched = Date.now();
  const rows = l.leases
    .map((x) => `<tr data-lease="${esc(x.id_prefix)}"><td><code>${esc(x.id_prefix)}…</code></td><td><code>${esc(x.instance_id)}</code></td>`
      + `<td class="num">${count(x.blocks)}</td><td class="num">${x.consumers_left}</td>`
      + `<td class="num countdown" data-deadline="${fetched + x.expires_in_ms}">${expiresIn(x.expires_in_ms)}</td></tr>`)
    .join('');
  page.innerHTML = `<h2>Leases</h2>
  <div class="grid">
    <div class="card"><h3>Live leases</h3><div class="big" id="lease-count">${count(l.active)}</div></div>
    <div class="card"><h3>Blocks held</h3><div class="big" id="lease-blocks">${count(l.blocks_held)}</div></div>
    <div class="card"><h3>Lease TTL</h3><div class="big">${duration(l.ttl_ms)}</div></div>
  </div>
  ${rows ? `<table id="lease-table"><tr><th>lease</th><th>instance</th><th class="num">blocks</th><th class="num">consumers left</th><th class="num">expiry</th></tr>${rows}</table>`
    : '<div class="off" id="no-leases">No live lease</div>'}`;
}

/** Moves every countdown on the page by the time since its document was fetched. */
export function tick() {
  const now = Date.now();
  document.querySelectorAll('.countdown').forEach((el) => {
    el.textContent = expiresIn(Number(el.dataset.deadline) - now);
  });
}

// ------------------------------------------------------------------ transfer

export async function transfer(page) {
  const t = await getJson('api/admin/transfer');
  if (!t.configured) {
    page.innerHTML = `<h2>Transfer</h2>${off('transfer-off', t.message,
      'The P2P transfer engine runs when the server is started with transfer enabled (docs/transfer.md).')}`;
    return;
  }
  const peers = t.peers
    .map((p) => {
      const conns = p.connections
        .map((c) => `<tr data-connection="${c.index}"><td class="num">#${c.index}</td><td>${pill(c.state)}</td>`
          + `<td class="num">${count(c.in_flight_ops)}</td><td class="num">${count(c.ops_issued)}</td></tr>`)
        .join('');
      const errors = Object.entries(p.errors).map(([k, v]) => `${esc(k)}: ${count(v)}`).join(', ') || 'none';
      return `<div class="card" data-peer="${esc(p.peer)}"><h3><code>${esc(p.peer)}</code> ${pill(p.state)}</h3>
        <div class="grid">
          <div><div class="big">${count(p.in_flight_ops)}</div><div class="muted">ops in flight</div></div>
          <div><div class="big">${bytes(p.bytes_read + p.bytes_written)}</div><div class="muted">${bytes(p.bytes_read)} read · ${bytes(p.bytes_written)} written</div></div>
          <div><div class="big">${micros(p.latency_p50_micros)}</div><div class="muted">p50 · p99 ${micros(p.latency_p99_micros)} · max ${micros(p.latency_max_micros)}</div></div>
          <div><div class="big">${count(p.ops_failed)}</div><div class="muted">failed ops · errors ${errors}${p.last_error ? ` · last: ${esc(p.last_error)}` : ''}</div></div>
        </div>
        <table><tr><th class="num">connection</th><th>state</th><th class="num">in flight</th><th class="num">ops issued</th></tr>${conns || '<tr><td colspan="4" class="muted">no connection</td></tr>'}</table>
        <div class="muted">${counted(p.connects, 'connect')} · ${counted(p.drops, 'drop')} · ${counted(p.batches, 'batch', 'batches')}</div></div>`;
    })
    .join('');
  page.innerHTML = `<h2>Transfer</h2>
  <div class="grid">
    <div class="card"><h3>Fabric</h3><div class="big">${esc(t.fabric)}</div><div class="muted">${esc(t.nics.join(', ') || 'any NIC')} · ${esc(t.transports || 'UCX default transports')}</div></div>
    <div class="card"><h3>Connections per peer</h3><div class="big">${t.lanes}</div></div>
    <div class="card"><h3>Registered</h3><div class="big">${bytes(t.registered_bytes)}</div><div class="muted">${counted(t.registered_regions, 'region')}</div></div>
    <div class="card"><h3>Ops in flight</h3><div class="big" id="transfer-inflight">${count(t.in_flight_ops)}</div></div>
    ${poolMemoryCard(t.pool_memory)}
  </div>
  ${peers || '<div class="off" id="no-peers">No peer contacted yet</div>'}`;
}

// Where the pool's shards live decides how a peer on this host reads them (decision 0019).
function poolMemoryCard(m) {
  const detail = m.allocated_by === 'ucx'
    ? `${count(m.shared_shards)} of ${count(m.shards)} shards in shared memory · ${counted(m.engines_on_context, 'engine')} on its context`
    : `${counted(m.shards, 'shard')}; peers on this host read them through UCX's emulation, as over TCP`;
  return `<div class="card" id="pool-memory"><h3>Pool memory</h3>
    <div class="big">${m.allocated_by === 'ucx' ? 'UCX-allocated' : 'private mapping'}</div><div class="muted">${detail}</div></div>`;
}

// ------------------------------------------------------------------ ssd

export async function ssd(page) {
  const s = await getJson('api/admin/ssd');
  if (!s.configured) {
    page.innerHTML = `<h2>SSD</h2>${off('ssd-off', s.message,
      'Set <code>pega.ssd.enabled=true</code> and <code>pega.ssd.paths</code> to add the SSD tier (docs/ssd.md).')}`;
    return;
  }
  const shards = s.shards
    .map((x) => `<tr class="shard" data-shard="${x.id}"><td class="num">${x.id}</td><td><code>${esc(x.path)}</code></td>`
      + `<td style="min-width:180px">${usageBar(x.used_bytes, x.capacity_bytes, 'ssd')}<span class="shard-usage">${bytes(x.used_bytes)} / ${bytes(x.capacity_bytes)}</span></td>`
      + `<td class="num">${count(x.entries)}</td><td class="num">${bytes(x.bytes_written)}</td><td class="num">${bytes(x.bytes_read)}</td>`
      + `<td>${x.healthy ? pill('healthy') : `${pill('failed')} ${esc(x.failure_kind || '')}: ${esc(x.failure_detail)}`}</td></tr>`)
    .join('');
  const errs = Object.entries(s.errors).filter(([, v]) => v > 0).map(([k, v]) => `${esc(k)} ${count(v)}`).join(', ');
  page.innerHTML = `<h2>SSD</h2>
  <div class="grid">
    <div class="card"><h3>Health</h3><div class="big" id="ssd-health">${s.healthy ? pill('healthy') : pill('degraded')}</div><div class="muted">errors: ${errs || 'none'}</div></div>
    <div class="card"><h3>Write</h3><div class="big">${rate(s.rates.ssd_write_bytes_per_sec)}</div>
      <div class="muted">queue ${count(s.writes.queue_pending)} · in flight ${count(s.writes.inflight)} · ${counted(s.writes.blocks, 'block')}, ${bytes(s.writes.bytes)} · ${count(s.writes.failures)} failed · ${count(s.writes.queue_full)} dropped on a full queue</div></div>
    <div class="card"><h3>Read</h3><div class="big">${rate(s.rates.ssd_read_bytes_per_sec)}</div>
      <div class="muted">queue ${count(s.reads.queue_pending)} · in flight ${count(s.reads.inflight)} · reserved ${count(s.reads.reserved)} · ${counted(s.reads.blocks, 'block')}, ${bytes(s.reads.bytes)} · ${count(s.reads.failures)} failed</div></div>
  </div>
  <table id="shard-table"><tr><th class="num">shard</th><th>path</th><th>usage</th><th class="num">entries</th><th class="num">written</th><th class="num">read</th><th>health</th></tr>${shards}</table>`;
}

// ------------------------------------------------------------------ cluster (server side: its metaserver link)

export async function metaserverLink(page) {
  const m = await getJson('api/admin/metaserver');
  if (!m.configured) {
    page.innerHTML = `<h2>Cluster</h2>${off('metaserver-off', m.message,
      'Set <code>pega.metaserver.addr</code> to join a cluster index; the metaserver serves its own dashboard with every node (docs/metaserver.md).')}`;
    return;
  }
  const counters = Object.entries(m.counters).map(([k, v]) => `<tr><td>${esc(k.replaceAll('_', ' '))}</td><td class="num">${count(v)}</td></tr>`).join('');
  page.innerHTML = `<h2>Cluster</h2>
  <div class="grid">
    <div class="card"><h3>Metaserver</h3><div class="big"><code>${esc(m.target)}</code></div><div class="muted">this node announces itself as <code>${esc(m.advertise_addr)}</code></div></div>
    <div class="card"><h3>Link</h3><div class="big" id="metaserver-link">${pill(m.link)}</div><div class="muted">${m.last_failure ? esc(m.last_failure) : 'no failure'}</div></div>
    <div class="card"><h3>Epoch</h3><div class="big">${esc(String(m.epoch))}</div></div>
  </div>
  <table>${counters}</table>`;
}

// ------------------------------------------------------------------ cluster (metaserver)

export async function cluster(page) {
  const c = await getJson('api/admin/cluster');
  const fetched = Date.now();
  const rows = c.nodes
    .map((n) => `<tr data-node="${esc(n.node)}"><td><code>${esc(n.node)}</code></td><td>${pill(n.state)}</td>`
      + `<td class="num" data-seen="${fetched - n.last_seen_age_ms}">${ago(n.last_seen_age_ms)}</td>`
      + `<td class="num">${count(n.owned_blocks)}</td><td><code>${esc(n.node_id_fingerprint)}</code></td>`
      + `<td class="num">${count(n.takeovers)}</td><td>${n.fenced_node_id_fingerprints.length ? `${n.fenced_node_id_fingerprints.length} fenced: <code>${n.fenced_node_id_fingerprints.map(esc).join(', ')}</code>` : '<span class="muted">none</span>'}</td></tr>`)
    .join('');
  const live = c.nodes.filter((n) => n.state === 'live').length;
  page.innerHTML = `<h2>Cluster</h2>
  <div class="grid">
    <div class="card"><h3>Nodes</h3><div class="big" id="node-count">${live} live / ${c.nodes.length}</div><div class="muted">stale after ${duration(c.stale_after_secs * 1000)}, expired after ${duration(c.ttl_minutes * 60000)}</div></div>
    <div class="card"><h3>Blocks indexed</h3><div class="big" id="blocks-indexed">${count(c.block_keys)}</div><div class="muted">${counted(c.block_owners, 'owner entry', 'owner entries')}</div></div>
    <div class="card"><h3>Epoch</h3><div class="big" id="epoch">${esc(String(c.epoch))}</div><div class="muted">since ${esc(new Date(c.epoch_started_at_ms).toISOString())}</div></div>
    <div class="card"><h3>Fenced sessions</h3><div class="big">${count(c.fenced_sessions.length)}</div></div>
  </div>
  ${rows ? `<table id="node-table"><tr><th>node</th><th>liveness</th><th class="num">last heartbeat</th><th class="num">blocks</th><th>node id</th><th class="num">takeovers</th><th>fencing</th></tr>${rows}</table>`
    : '<div class="off" id="no-nodes">No node registered</div>'}`;
}

// ------------------------------------------------------------------ actions

const ACTIONS_FORM = `<h2>Actions</h2>
  <div class="card">
    <h3>Admin access</h3>
    <div id="access" class="muted"></div>
    <div class="row"><input id="token" type="password" placeholder="pega.admin.token" autocomplete="off">
      <button id="save-token">Use token</button><button id="clear-token">Forget</button></div>
  </div>
  <div class="grid" style="margin-top:12px">
    <div class="card"><h3>Clean up one instance</h3>
      <p class="muted">Drops the instance's registration, layer mappings and leases, as if its workers had exited.</p>
      <div class="row"><select id="instance-select"></select><button id="cleanup-instance" class="danger">Clean up instance…</button></div></div>
    <div class="card"><h3>Clean up memory</h3>
      <p class="muted">Evicts every block from the RAM index; blocks a lease holds stay until it ends.</p>
      <div class="row"><button id="cleanup-memory" class="danger">Clean up memory…</button></div></div>
  </div>
  <div id="action-result" class="result" hidden></div>`;

export async function actions(page, { navigated }) {
  if (navigated || !page.querySelector('#cleanup-memory')) {
    page.innerHTML = ACTIONS_FORM;
    page.querySelector('#token').value = token();
    page.querySelector('#save-token').onclick = () => { setToken(page.querySelector('#token').value.trim()); refreshAccess(page); };
    page.querySelector('#clear-token').onclick = () => { setToken(''); page.querySelector('#token').value = ''; refreshAccess(page); };
    page.querySelector('#cleanup-memory').onclick = () =>
      confirmThen('Evict every block from the RAM index?', () => run(page, 'cache/memory/cleanup'));
    page.querySelector('#cleanup-instance').onclick = () => {
      const id = page.querySelector('#instance-select').value;
      if (!id) return;
      confirmThen(`Clean up instance ${id}? Its workers must register again.`,
        () => run(page, `instances/cleanup?id=${encodeURIComponent(id)}`));
    };
  }
  // the access card must show even when the instance list is refused: it is where the token goes
  const [instances] = await Promise.all([
    getJson('api/admin/instances').catch((e) => { if (e.status === 403) return null; throw e; }),
    refreshAccess(page)]);
  const select = page.querySelector('#instance-select');
  if (instances === null) {
    select.innerHTML = '<option value="">the instance list needs the admin token</option>';
    select.dataset.ids = '\u0000refused'; // no list of ids joins to this: the next answer replaces the option
    return;
  }
  const chosen = select.value;
  const ids = instances.instances.map((i) => i.id);
  if (select.dataset.ids !== ids.join('\n')) {
    select.innerHTML = ids.length
      ? ids.map((id) => `<option value="${esc(id)}">${esc(id)}</option>`).join('')
      : '<option value="">no instance registered</option>';
    select.dataset.ids = ids.join('\n');
    if (ids.includes(chosen)) select.value = chosen;
  }
}

async function refreshAccess(page) {
  const a = await getJson('api/admin/access');
  const el = page.querySelector('#access');
  if (!el) return;
  el.innerHTML = a.permitted
    ? `${pill('up')} Actions are enabled for this browser${a.loopback_listener && !token() ? ' (loopback listener)' : ' (admin token)'}.`
    : `${pill('disabled')} Actions are refused for this browser. ${a.token_configured
      ? 'Enter the admin token (<code>pega.admin.token</code>) above.'
      : 'No <code>pega.admin.token</code> is set: set one (e.g. <code>PEGA_ADMIN_TOKEN</code>) and enter it here, or bind the HTTP listener to loopback (<code>server.address=127.0.0.1</code>) and open the page from the host.'}`;
  el.dataset.permitted = String(a.permitted);
}

function confirmThen(text, action) {
  const modal = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = text;
  modal.hidden = false;
  document.getElementById('confirm-yes').onclick = () => { modal.hidden = true; action(); };
  document.getElementById('confirm-no').onclick = () => { modal.hidden = true; };
}

async function run(page, path) {
  const out = page.querySelector('#action-result');
  const r = await post(path);
  out.hidden = false;
  out.dataset.status = String(r.status);
  if (r.ok) {
    out.className = 'result ok';
    out.textContent = `Done: ${JSON.stringify(r.body)}`;
  } else if (r.status === 403) {
    out.className = 'result refused';
    out.textContent = `Refused (403): ${typeof r.body === 'string' ? r.body : JSON.stringify(r.body)}\n`
      + 'To enable actions, enter the admin token above (the server needs pega.admin.token set), or bind the HTTP '
      + 'listener to loopback (server.address=127.0.0.1) and open the page from the host.';
  } else {
    out.className = 'result refused';
    out.textContent = `Failed (${r.status}): ${typeof r.body === 'string' ? r.body : JSON.stringify(r.body)}`;
  }
}
