// SPDX-License-Identifier: MIT
// prove/web/app.js: prove serve's space-time view: asks the server for
// what fits the pixels of a time range (/api/view) and draws it; zoom,
// pan, range selection, filters, record details, the range in the URL.
'use strict';

const $ = (id) => document.getElementById(id);
const errors = [];
function showError(msg) {
  errors.push(String(msg));
  $('errors').textContent = 'error: ' + errors.join('\nerror: ');
}
window.addEventListener('error', (e) => showError(e.message));
window.addEventListener('unhandledrejection', (e) => showError(e.reason));

const S = {
  f: 0, meta: null, first: 0n, span: 1,  // times: ns since the first record
  from: 0, to: 1, view: null, pending: 0, rowsShown: [], rowY: [],
  rowH: [], drag: null, sel: null, rec: null,
};
const DEPTH_H = 7, MARK_H = 6, ROW_PAD = 3, AXIS_H = 22;
const WHOLE = 1.02;  // the whole run, and a margin for what ends it

async function getJSON(url) {
  const r = await fetchRetry(url);
  const j = await r.json();
  if (!r.ok) throw new Error(url + ': ' + (j.error || r.status));
  return j;
}

// ---- time: numbers of ns since the trace's first record ----
function fmtDur(ns) {
  const a = Math.abs(ns);
  if (a >= 1e9) return +(ns / 1e9).toPrecision(6) + ' s';
  if (a >= 1e6) return +(ns / 1e6).toPrecision(6) + ' ms';
  if (a >= 1e3) return +(ns / 1e3).toPrecision(6) + ' \u00b5s';
  return ns.toFixed(a < 10 ? 2 : 0) + ' ns';
}
function fmtSecs(ns) { return (ns / 1e9).toFixed(9) + ' s'; }
function absNs(rel) { return S.first + BigInt(Math.max(0, Math.floor(rel))); }
function niceStep(raw) {
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}
function stateColor(id) {
  return 'hsl(' + ((id * 137.508) % 360).toFixed(0) + ',60%,' +
    (55 + (id % 3) * 8) + '%)';
}

// ---- the URL: #f=..&from=..&to=.. (absolute ns, as the trace has them) ----
// rec=ROW,NS,EID: the record shown below the view, kept when shared.
function readHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  const f = parseInt(h.get('f') || '0', 10);
  return { f: isNaN(f) ? 0 : f, from: h.get('from'), to: h.get('to'),
    rec: h.get('rec') };
}
function writeHash() {
  const h = 'f=' + S.f + '&from=' + absNs(S.from) + '&to=' +
    absNs(Math.ceil(S.to)) + (S.rec ? '&rec=' + S.rec : '') +
    (L.paused ? '&live=paused' : '');
  if (location.hash.slice(1) !== h) history.replaceState(null, '', '#' + h);
}
function parseRel(s) {
  if (s === null || !/^[0-9]{1,20}$/.test(s)) return null;
  const v = BigInt(s) - S.first;
  return Number(v < 0n ? 0n : v);
}

// ---- rows: grouped by host and process, filtered ----
function rowLabel(r) {
  const p = r.rank !== undefined ? 'rank ' + r.rank + ' ' + r.pname :
    (r.prog || 'pid ' + r.pid);
  return { host: r.host || 'node ' + r.node, proc: p + ' (' + r.pid + ')',
    thr: 'tid ' + r.tid };
}
function filterRows() {
  const fh = $('f-host').value.toLowerCase();
  const fp = $('f-proc').value.toLowerCase();
  S.rowsShown = [];
  S.meta.rows.forEach((r, i) => {
    const l = rowLabel(r);
    if (fh && !l.host.toLowerCase().includes(fh)) return;
    if (fp && !(l.proc.toLowerCase().includes(fp) || String(r.pid) === fp))
      return;
    S.rowsShown.push(i);
  });
}
function layout() {
  let y = AXIS_H;
  S.rowY = []; S.rowH = [];
  let prev = null;
  for (const i of S.rowsShown) {
    const r = S.meta.rows[i];
    const key = r.node + ':' + r.pid;
    if (key !== prev) y += 14;  // the process's title line
    prev = key;
    S.rowY[i] = y;
    S.rowH[i] = Math.max(1, r.depth) * DEPTH_H + MARK_H + ROW_PAD;
    y += S.rowH[i];
  }
  return y + 4;
}

// ---- drawing ----
function nameMatches(name) {
  const f = $('f-name').value.toLowerCase();
  return !f || String(name).toLowerCase().includes(f);
}
function eidName(eid) {
  const e = S.meta.eids[String(eid)];
  return e ? e.name : 'eid ' + eid;
}
function drawLabels(h) {
  const c = $('labels'), g = c.getContext('2d');
  c.height = h; c.style.height = h + 'px';
  g.clearRect(0, 0, c.width, h);
  g.font = '11px sans-serif';
  let prevHost = null, prevProc = null;
  for (const i of S.rowsShown) {
    const r = S.meta.rows[i], l = rowLabel(r), y = S.rowY[i];
    if (r.node + ':' + r.pid !== prevProc) {
      g.fillStyle = '#000';
      const t = (l.host !== prevHost ? l.host + ' / ' : '\u2003') + l.proc;
      g.fillText(t.slice(0, 34), 2, y - 3);
      prevProc = r.node + ':' + r.pid; prevHost = l.host;
    }
    g.fillStyle = '#555';
    g.fillText(l.thr, 14, y + 10);
  }
}
function drawAxis(g, w) {
  const len = S.to - S.from, step = niceStep(len / (w / 110));
  g.fillStyle = '#f4f4f4'; g.fillRect(0, 0, w, AXIS_H);
  g.fillStyle = '#333'; g.strokeStyle = '#ccc'; g.font = '11px sans-serif';
  // Deep zooms label ticks from the first one (the range line above
  // gives the view's start in full).
  const t0 = Math.ceil(S.from / step) * step, rel = step * 1e4 < S.from;
  for (let t = t0; t < S.to; t += step) {
    const x = (t - S.from) / len * w;
    g.beginPath(); g.moveTo(x, AXIS_H - 6); g.lineTo(x, AXIS_H); g.stroke();
    g.fillText(rel && t > t0 ? '+' + fmtDur(t - t0) : fmtDur(t), x + 2, 12);
  }
}
function draw() {
  const v = S.view, c = $('view');
  if (!v || !S.meta) return;
  const h = layout();
  drawLabels(h);
  const w = c.clientWidth;
  c.width = w; c.height = h; c.style.height = h + 'px';
  const g = c.getContext('2d');
  g.clearRect(0, 0, w, h);
  const k = w / v.width;  // the answer's pixels to the canvas's
  const shown = new Set(S.rowsShown);
  // Collection phases: the rows of the node, shaded.
  g.fillStyle = 'rgba(40,80,255,0.12)';
  for (const [node, x0, x1] of v.phases)
    for (const i of S.rowsShown)
      if (S.meta.rows[i].node === node)
        g.fillRect(x0 * k, S.rowY[i], Math.max(1, (x1 - x0) * k), S.rowH[i]);
  v.rows.forEach((row, j) => {
    const i = v.r0 + j;
    if (!shown.has(i)) return;
    const y = S.rowY[i];
    g.fillStyle = '#fafafa';
    g.fillRect(0, y, w, S.rowH[i] - ROW_PAD);
    row.d.forEach((segs, d) => {
      for (const [x0, x1, st] of segs) {
        if (!nameMatches(S.meta.states[st])) continue;
        g.fillStyle = stateColor(st);
        g.fillRect(x0 * k, y + d * DEPTH_H, Math.max(1, (x1 - x0) * k),
          DEPTH_H - 1);
      }
    });
    const my = y + Math.max(1, row.d.length) * DEPTH_H;
    for (const [x, n, eid, , kind] of row.m) {
      if (!nameMatches(eidName(eid))) continue;
      g.fillStyle = kind === 4 || kind === 5 ? '#d60' :
        (n > 1 ? '#222' : '#666');
      g.fillRect(x * k, my, Math.max(1.5, k), MARK_H - 1);
    }
  });
  // Messages: arrows, bundled by the server; the more there are, the
  // fainter each (no wall of red), a bundle of many darker.
  const fade = Math.max(0.04, Math.min(0.7, 150 / (v.arrows.length + 1)));
  // A message whose latency is less than its clocks' bounds together:
  // dashed (its order is not certain).
  let dashed = 0;
  for (const [rs, xs, rr, xr, n, , , unsure] of v.arrows) {
    if (!shown.has(rs) || !shown.has(rr)) continue;
    g.setLineDash(unsure ? [4, 3] : []);
    dashed += unsure ? 1 : 0;
    const y0 = S.rowY[rs] + S.rowH[rs] / 2, y1 = S.rowY[rr] + S.rowH[rr] / 2;
    g.strokeStyle = 'rgba(200,0,0,' + Math.min(0.9, fade *
      (1 + Math.log2(n))).toFixed(3) + ')';
    g.lineWidth = v.arrows.length > 500 ? 1 : Math.min(4, 1 + Math.log2(n));
    g.beginPath(); g.moveTo(xs * k, y0); g.lineTo(xr * k, y1); g.stroke();
    const a = Math.atan2(y1 - y0, (xr - xs) * k);
    g.beginPath(); g.moveTo(xr * k, y1);
    g.lineTo(xr * k - 6 * Math.cos(a - 0.4), y1 - 6 * Math.sin(a - 0.4));
    g.lineTo(xr * k - 6 * Math.cos(a + 0.4), y1 - 6 * Math.sin(a + 0.4));
    g.fillStyle = g.strokeStyle; g.fill();
  }
  g.setLineDash([]);
  $('view').dataset.dashed = dashed;  // how many, for the tests
  g.lineWidth = 1;
  // Losses: a red triangle; process start (green), end (black), killed
  // (red cross) or gone (grey).
  for (const [row, node, pid, x, count] of v.losses) {
    const rows = row >= 0 ? [row] : S.rowsShown.filter((i) =>
      S.meta.rows[i].node === node && S.meta.rows[i].pid === pid);
    for (const i of rows) {
      if (!shown.has(i)) continue;
      g.fillStyle = '#e00';
      g.beginPath(); g.moveTo(x * k, S.rowY[i]);
      g.lineTo(x * k - 5, S.rowY[i] + 9); g.lineTo(x * k + 5, S.rowY[i] + 9);
      g.fill();
      g.fillText(String(count), x * k + 6, S.rowY[i] + 9);
    }
  }
  for (const [node, pid, x, how] of v.procs)
    for (const i of S.rowsShown) {
      const r = S.meta.rows[i];
      if (r.node !== node || r.pid !== pid) continue;
      const y = S.rowY[i], hh = S.rowH[i] - ROW_PAD;
      g.strokeStyle = how < 0 ? '#090' : how === 2 ? '#e00' :
        how === 4 ? '#999' : '#000';
      g.lineWidth = 2;
      g.beginPath();
      if (how === 2) {
        g.moveTo(x * k - 5, y); g.lineTo(x * k + 5, y + hh);
        g.moveTo(x * k + 5, y); g.lineTo(x * k - 5, y + hh);
      } else { g.moveTo(x * k, y); g.lineTo(x * k, y + hh); }
      g.stroke();
      g.lineWidth = 1;
    }
  drawAxis(g, w);
  if (S.sel) {
    g.fillStyle = 'rgba(0,0,0,0.15)';
    g.fillRect(Math.min(S.sel[0], S.sel[1]), 0,
      Math.abs(S.sel[1] - S.sel[0]), h);
  }
  inView(v);
}
// The messages of the view, listed when there are few.
function inView(v) {
  const el = $('inview');
  const single = v.arrows.filter((a) => a[4] === 1);
  if (v.arrows.length === 0 || v.arrows.length > 20 ||
      single.length !== v.arrows.length) {
    el.textContent = v.arrows.length ? v.arrows.length +
      ' arrow bundles in view' + (v.arrows_stride > 1 ? ' (one message in ' +
      v.arrows_stride + ' drawn: zoom in for each)' : '') : '';
    return;
  }
  let s = '<b>messages in view</b><table><tr><th>from row</th><th>to row' +
    '</th><th>sent</th><th>latency</th><th>bounds</th></tr>';
  for (const [rs, , rr, , , ts, tr, unsure, bound] of v.arrows)
    s += '<tr class="msg' + (unsure ? ' unsure' : '') + '"><td>' + rs +
      '</td><td>' + rr + '</td><td>' + fmtDur(ts) +
      '</td><td class="lat" data-ns="' + (tr - ts) + '">' + fmtDur(tr - ts) +
      '</td><td class="bound" data-ns="' + bound + '">±' + fmtDur(bound) +
      (unsure ? ' (order not certain)' : '') + '</td></tr>';
  el.innerHTML = s + '</table>';
}

// ---- asking the server ----
async function load(now) {  // now: the views too, at once (live)
  const c = $('view'), w = Math.max(1, Math.min(16384, c.clientWidth));
  const seq = ++S.pending;
  const first = S.rowsShown.length ? Math.min(...S.rowsShown) : 0;
  const last = S.rowsShown.length ? Math.max(...S.rowsShown) + 1 : 0;
  const url = '/api/view?f=' + S.f + '&from=' + absNs(S.from) + '&to=' +
    absNs(Math.max(S.from + 1, Math.ceil(S.to))) + '&width=' + w +
    '&rows=' + first + '-' + Math.min(last, first + 4096);
  const v = await getJSON(url);
  if (seq !== S.pending) return;  // a later request is under way
  S.view = v;
  $('r-from').textContent = fmtSecs(S.from);
  $('r-to').textContent = fmtSecs(S.to);
  $('r-len').textContent = fmtDur(S.to - S.from);
  $('r-note').textContent = v.approximate ? (v.from_file ?
    '(this range read from the file' : '(from the summary file') +
    ': the index is ' + Math.round(v.progress * 100) + '% read)' :
    v.truncated ? '(some detail left out)' : '';
  writeHash();
  draw();
  if (typeof Views !== 'undefined' && !S.meta.approximate)
    await Views.update(S, showError, now);  // views.js
}
let timer = null;
function reload() {
  if (timer) return;
  timer = setTimeout(() => { timer = null; load().catch(showError); }, 15);
}
function setRange(from, to) {
  const len = Math.max(1, to - from);
  from = Math.max(-len * 0.05, Math.min(from, S.span));
  S.from = Math.max(0, from); S.to = S.from + len;
  reload();
}
function zoom(factor, at) {  // at: 0..1 across the view
  const len = S.to - S.from, nl = Math.max(1, Math.min(len * factor,
    S.span * 1.1 + 1));
  setRange(S.from + (len - nl) * at, S.from + (len - nl) * at + nl);
}

// ---- records ----
async function showRecord(row, ts, eid) {
  return showRecordAt(row, absNs(ts).toString(), eid);
}
async function showRecordAt(row, ts, eid) {  // ts: absolute ns, a string
  const url = '/api/record?f=' + S.f + '&row=' + row + '&ts=' + ts +
    (eid === undefined ? '' : '&eid=' + eid);
  const r = await getJSON(url);
  S.rec = row + ',' + ts + (eid === undefined ? '' : ',' + eid);
  writeHash();
  const rel = Number(BigInt(r.ts) - S.first);
  let s = (r.name || eidName(r.eid)) + '  (eid ' + r.eid + ')\n' +
    'at ' + fmtDur(rel) + ' (' + r.ts + ' ns)\n' +
    'host ' + r.node + ' pid ' + r.pid + ' tid ' + r.tid + '\n' +
    'clock bound ±' + fmtDur(r.bound_ns) + ' (' + r.bound_ns + ' ns, model ' +
    r.model + ')' + (r.raw_ts !== r.ts ? ', moved ' +
    fmtDur(Number(BigInt(r.ts) - BigInt(r.raw_ts))) + ' later so that no ' +
    'message is received before it was sent (file: ' + r.raw_ts + ' ns)' :
    '') + '\n';
  if (r.process)
    s += 'process ' + (r.process.rank !== undefined ? 'rank ' +
      r.process.rank + ' ' + r.process.name + ' ' : '') + r.process.prog + '\n';
  if (r.format !== undefined) s += 'format ' + r.format + '\n';
  s += 'fields ' + r.fields.join(' ') + '\n';
  if (r.message)
    s += r.message.matched ? 'message ' + r.message.bytes + ' bytes, ' +
      (r.eid === -4 ? 'received' : 'sent') + ' by row ' +
      r.message.other_row + ' (pid ' + r.message.other.pid + ' tid ' +
      r.message.other.tid + '), latency ' + fmtDur(r.message.latency_ns) +
      ' (' + r.message.latency_ns + ' ns)' + (r.message.unsure ?
      ', less than the clocks\' bounds (' + fmtDur(r.message.bound_ns) +
      '): its order is not certain' : '') + '\n' : 'message not matched\n';
  $('detail').textContent = s;
}
function hit(x, y) {
  const v = S.view, k = $('view').clientWidth / v.width;
  for (const [rs, xs, rr, xr, , ts, tr] of v.arrows) {
    if (Math.abs(xs * k - x) < 4 && Math.abs(S.rowY[rs] + S.rowH[rs] / 2 - y) < 6)
      return () => showRecord(rs, ts, -4);
    if (Math.abs(xr * k - x) < 4 && Math.abs(S.rowY[rr] + S.rowH[rr] / 2 - y) < 6)
      return () => showRecord(rr, tr, -5);
  }
  for (let j = 0; j < v.rows.length; j++) {
    const i = v.r0 + j, y0 = S.rowY[i];
    if (y0 === undefined || y < y0 || y >= y0 + S.rowH[i]) continue;
    let best = null;
    for (const m of v.rows[j].m)
      if (Math.abs(m[0] * k - x) < 4 && (!best ||
          Math.abs(m[0] * k - x) < Math.abs(best[0] * k - x))) best = m;
    if (best) return () => showRecord(i, best[3], best[2]);
    const d = Math.floor((y - y0) / DEPTH_H), segs = v.rows[j].d[d];
    if (segs)
      for (const [x0, x1, st, n] of segs)
        if (x >= x0 * k - 1 && x <= x1 * k + 1)
          return () => {
            $('detail').textContent = 'state ' + S.meta.states[st] +
              '\n' + n + ' span(s) start here; zoom in to see each\nfrom ' +
              fmtDur(S.from + x0 * (S.to - S.from) / v.width) + ' to ' +
              fmtDur(S.from + x1 * (S.to - S.from) / v.width);
          };
  }
  return null;
}

// ---- input ----
function bind() {
  const c = $('view');
  c.addEventListener('wheel', (e) => {
    e.preventDefault();
    const r = c.getBoundingClientRect();
    zoom(e.deltaY > 0 ? 1.25 : 0.8, (e.clientX - r.left) / r.width);
  }, { passive: false });
  c.addEventListener('mousedown', (e) => {
    const r = c.getBoundingClientRect();
    S.drag = { x: e.clientX - r.left, y: e.clientY - r.top, from: S.from,
      to: S.to, sel: e.shiftKey, moved: false };
    if (e.shiftKey) S.sel = [S.drag.x, S.drag.x];
  });
  window.addEventListener('mousemove', (e) => {
    if (!S.drag) return;
    const r = c.getBoundingClientRect(), x = e.clientX - r.left;
    if (Math.abs(x - S.drag.x) > 2) S.drag.moved = true;
    if (S.drag.sel) { S.sel[1] = x; draw(); return; }
    const dt = (x - S.drag.x) / r.width * (S.drag.to - S.drag.from);
    setRange(S.drag.from - dt, S.drag.to - dt);
  });
  window.addEventListener('mouseup', () => {
    const d = S.drag;
    S.drag = null;
    if (!d) return;
    if (d.sel && S.sel && Math.abs(S.sel[1] - S.sel[0]) > 3) {
      const w = c.clientWidth, len = S.to - S.from;
      const a = Math.min(S.sel[0], S.sel[1]), b = Math.max(S.sel[0], S.sel[1]);
      S.sel = null;
      setRange(S.from + a / w * len, S.from + b / w * len);
      return;
    }
    S.sel = null;
    if (!d.moved) {
      const f = hit(d.x, d.y);
      if (f) f().catch(showError);
    }
  });
  window.addEventListener('keydown', (e) => {
    if (e.target.tagName === 'INPUT') return;
    const len = S.to - S.from;
    switch (e.key) {
    case '+': case '=': case 'w': zoom(0.5, 0.5); break;
    case '-': case 's': zoom(2, 0.5); break;
    case 'ArrowLeft': case 'a': setRange(S.from - len / 4, S.to - len / 4); break;
    case 'ArrowRight': case 'd': setRange(S.from + len / 4, S.to + len / 4); break;
    case '0': case 'Home': setRange(0, WHOLE * S.span); break;
    default: return;
    }
    e.preventDefault();
  });
  for (const id of ['f-host', 'f-proc'])
    $(id).addEventListener('input', () => { filterRows(); reload(); });
  $('f-name').addEventListener('input', draw);
  $('b-all').addEventListener('click', () => setRange(0, WHOLE * S.span));
  $('file').addEventListener('change', () => {
    location.hash = 'f=' + $('file').value;
    openFile(parseInt($('file').value, 10), null, null, null)
      .catch(showError);
  });
  window.addEventListener('resize', reload);
  window.addEventListener('hashchange', () => {
    const h = readHash();
    if (h.f !== S.f) return;
    const a = parseRel(h.from), b = parseRel(h.to);
    if (a !== null && b !== null && b > a &&
        (Math.abs(a - S.from) >= 1 || Math.abs(b - Math.ceil(S.to)) >= 1))
      setRange(a, b);
  });
}

async function openFile(f, from, to, rec) {
  S.f = f;
  S.meta = await getJSON('/api/meta?f=' + f);
  const st = await getJSON('/api/stats?f=' + f);
  S.first = BigInt(S.meta.first);
  S.span = Math.max(1, Number(BigInt(S.meta.last) - S.first) + 1);
  for (const k of ['records', 'span', 'processes', 'threads', 'losses',
    'matched'])
    $('st-' + k).textContent = st[k];
  document.title = 'prove ' + S.meta.file;
  filterRows();
  const a = parseRel(from), b = parseRel(to);
  if (a !== null && b !== null && b > a) { S.from = a; S.to = b; }
  else { S.from = 0; S.to = WHOLE * S.span; }
  S.rec = null;
  await load();
  if (S.meta.approximate) summaryWait(f);
  const m = /^([0-9]{1,9}),([0-9]{1,20})(?:,(-?[0-9]{1,10}))?$/.exec(rec || '');
  if (m) await showRecordAt(parseInt(m[1], 10), m[2], m[3]);
}

// Answered from the trace's summary sidecar while the server builds the
// index: asked again every second until it is built, then the file is
// opened again at the same range (rows, states and marks in full).  The
// body's data-index is "summary" until then, "full" after.
function summaryWait(f) {
  document.body.dataset.index = 'summary';
  setTimeout(async () => {
    if (S.f !== f) return;
    const m = await getJSON('/api/meta?f=' + f);
    if (m.approximate) { summaryWait(f); return; }
    await openFile(f, String(absNs(S.from)), String(absNs(Math.ceil(S.to))));
    document.body.dataset.index = 'full';
  }, 1000);
}

// ---- following a running job (prove serve ID): /api/live's events ----
// Each "update" (a collection read) refreshes the numbers and the view; a
// view showing the end of the run follows it.  The record counts shown
// are kept in body's data-live-records, in order.  Pause (the button, or
// live=paused in the URL) stops following; the server goes on reading.
// live=N in the URL: follow N collections, then pause (for scripts).
// Updates are applied one at a time, in order, each to the range as it is
// once the server's answers came: a range selected meanwhile is kept (not
// taken for the end of the run and moved there), and a selection being
// dragged holds the view still.
const L = { es: null, paused: false, last: null, seen: [], left: 0,
  chain: Promise.resolve() };
function liveShow() {
  const d = L.last;
  if (!d) return;
  const st = d.state === 'following' && L.paused ? 'paused' : d.state;
  $('live').textContent = (d.state === 'following' ?
    (L.paused ? 'paused: ' : 'live: ') : '') + d.message;
  $('live').className = 'live-' + st;
  document.body.dataset.liveState = st;
}
async function liveUpdate() {
  if (L.paused) return;
  const meta = await getJSON('/api/meta?f=0');
  const st = await getJSON('/api/stats?f=0');
  if (L.paused) return;
  // From here to load(), nothing waits: the range read is the one shown.
  const atEnd = S.to >= S.span && !(S.drag && S.drag.sel);
  const first0 = S.first;
  S.meta = meta;
  S.first = BigInt(S.meta.first);
  const shift = Number(S.first - first0);  // a window dropped the oldest
  S.span = Math.max(1, Number(BigInt(S.meta.last) - S.first) + 1);
  for (const k of ['records', 'span', 'processes', 'threads', 'losses',
    'matched'])
    $('st-' + k).textContent = st[k];
  L.seen.push(st.records);
  document.body.dataset.liveRecords = L.seen.join(' ');
  filterRows();
  const len = S.to - S.from;
  if (atEnd && S.from <= 0) { S.from = 0; S.to = WHOLE * S.span; }
  else if (atEnd) { S.to = WHOLE * S.span; S.from = Math.max(0, S.to - len); }
  else { S.from = Math.max(0, S.from - shift); S.to = S.from + len; }
  // The view and BEE's views of the range shown, with the new records.
  await load(true);
  if (L.left > 0 && --L.left === 0) livePause(true);
}
function liveConnect() {
  if (L.es) return;
  L.es = new EventSource('/api/live');
  L.es.addEventListener('update', (e) => {
    L.last = JSON.parse(e.data);
    liveShow();
    L.chain = L.chain.then(liveUpdate).catch(showError);
  });
  L.es.onerror = () => {
    if (L.es && L.es.readyState === EventSource.CLOSED) {
      $('live').textContent = 'no connection to prove serve';
      L.es = null;
    }
  };
}
function livePause(p) {
  L.paused = p;
  $('b-live').textContent = p ? 'follow' : 'pause';
  if (p && L.es) { L.es.close(); L.es = null; }
  if (!p) liveConnect();
  liveShow();
  writeHash();
}
async function liveStart(p) {  // p: the URL's live=, read before any
  // hash is written
  const f = await getJSON('/api/follow');
  if (!f.live) return;
  L.last = f;
  $('livebar').hidden = false;
  $('b-live').addEventListener('click', () => livePause(!L.paused));
  window.addEventListener('hashchange', () => {
    const p = new URLSearchParams(location.hash.slice(1)).get('live');
    if ((p === 'paused') !== L.paused) livePause(p === 'paused');
  });
  if (/^[0-9]{1,6}$/.test(p || '')) L.left = parseInt(p, 10);
  livePause(p === 'paused');
}

async function main() {
  bind();
  const files = await getJSON('/api/files');
  files.forEach((p, i) => {
    const o = document.createElement('option');
    o.value = i; o.textContent = p;
    $('file').appendChild(o);
  });
  const h = readHash();
  const live = new URLSearchParams(location.hash.slice(1)).get('live');
  const f = h.f >= 0 && h.f < files.length ? h.f : 0;
  $('file').value = f;
  await openFile(f, h.from, h.to, h.rec);
  await liveStart(live);
  document.body.dataset.ready = '1';
}
main().catch(showError);
