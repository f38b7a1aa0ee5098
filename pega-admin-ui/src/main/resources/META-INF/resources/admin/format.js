// Units people read: binary sizes (GiB), decimal rates (GB/s), durations as "9 m 12 s".

const BIN = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
const DEC = ['B/s', 'kB/s', 'MB/s', 'GB/s', 'TB/s'];

export function bytes(n) {
  if (n == null || !Number.isFinite(n)) return '–';
  let i = 0;
  let v = Math.abs(n);
  while (v >= 1024 && i < BIN.length - 1) { v /= 1024; i++; }
  return `${n < 0 ? '-' : ''}${i === 0 ? v : v.toFixed(v < 10 ? 2 : 1)} ${BIN[i]}`;
}

export function rate(bytesPerSec) {
  if (bytesPerSec == null || !Number.isFinite(bytesPerSec)) return '–';
  let i = 0;
  let v = Math.max(0, bytesPerSec);
  while (v >= 1000 && i < DEC.length - 1) { v /= 1000; i++; }
  return `${i === 0 ? Math.round(v) : v.toFixed(v < 10 ? 2 : 1)} ${DEC[i]}`;
}

export function count(n) {
  if (n == null || !Number.isFinite(n)) return '–';
  return Math.round(n).toLocaleString('en-US');
}

/** "1 block", "2 blocks", "1 batch", "3 batches": a count and its noun, in the number the count asks for. */
export function counted(n, one, many = `${one}s`) {
  return `${count(n)} ${Math.round(n) === 1 ? one : many}`;
}

export function percent(fraction) {
  if (fraction == null || !Number.isFinite(fraction)) return '–';
  return `${(fraction * 100).toFixed(fraction >= 0.995 || fraction === 0 ? 0 : 1)} %`;
}

/** "9 m 12 s", "2 h 3 m", "850 ms". */
export function duration(ms) {
  if (ms == null || !Number.isFinite(ms)) return '–';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  let s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400); s -= d * 86400;
  const h = Math.floor(s / 3600); s -= h * 3600;
  const m = Math.floor(s / 60); s -= m * 60;
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} m`;
  if (m > 0) return `${m} m ${s} s`;
  return `${s} s`;
}

export function expiresIn(ms) {
  return ms <= 0 ? 'expired' : `expires in ${duration(ms)}`;
}

export function ago(ms) {
  return `${duration(ms)} ago`;
}

export function micros(us) {
  if (us == null || !Number.isFinite(us)) return '–';
  return us < 1000 ? `${us} µs` : `${(us / 1000).toFixed(us < 10000 ? 2 : 1)} ms`;
}

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Every value from the server goes through here before it reaches innerHTML. */
export function esc(value) {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]);
}
