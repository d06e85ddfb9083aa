// SPDX-License-Identifier: MIT
// prove/web/views.js: BEE's views of a selection (the whole run, or a time
// range and rows): the frequency counter (bars), the time profiler (pie and
// table), the load meter (lines), message statistics (matrix of bytes,
// latency histogram) and the tracer (records, a page at a time).  The
// numbers are prove stats' (/api/bee); the charts are SVG made here.  Used
// by prove serve's page (Views.update, called by app.js when its view
// changes) and by prove report (Views.report, on data built into the page).
'use strict';

// A GET that failed on its way (a connection cut, a server too busy for
// the browser's patience): asked again after 0.2 s and 1 s; then its
// error, which names the URL.  Answers with an HTTP error are not retried.
async function fetchRetry(url) {
  for (let i = 0; ; i++) {
    try {
      return await fetch(url);
    } catch (e) {
      if (i >= 2) throw new Error(url + ': ' + e);
      await new Promise((ok) => setTimeout(ok, i ? 1000 : 200));
    }
  }
}

const Views = (() => {
  const NS = 'http://www.w3.org/2000/svg';
  const el = (tag, attrs, text) => {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const sv = (tag, attrs, text) => {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const color = (i) => 'hsl(' + ((i * 137.508) % 360).toFixed(0) +
    ',60%,' + (55 + (i % 3) * 8) + '%)';
  const fmtNum = (v) => v >= 1e9 ? (v / 1e9).toPrecision(3) + 'G' :
    v >= 1e6 ? (v / 1e6).toPrecision(3) + 'M' :
      v >= 1e3 ? (v / 1e3).toPrecision(3) + 'k' : String(+v.toPrecision(3));
  const fmtNs = (ns) => ns >= 1e9 ? +(ns / 1e9).toPrecision(3) + ' s' :
    ns >= 1e6 ? +(ns / 1e6).toPrecision(3) + ' ms' :
      ns >= 1e3 ? +(ns / 1e3).toPrecision(3) + ' \u00b5s' : ns + ' ns';

  // A table: head, rows of cells (text), the element's id.
  function table(id, head, rows) {
    const t = el('table', { id: id, class: 'vt' });
    const h = el('tr');
    for (const c of head) h.appendChild(el('th', {}, c));
    t.appendChild(h);
    for (const r of rows) {
      const tr = el('tr');
      r.forEach((c, i) => tr.appendChild(el('td',
        i === r.length - 1 && typeof c === 'string' && isNaN(+c) ?
          { class: 'l' } : {}, String(c))));
      t.appendChild(tr);
    }
    return t;
  }
  function section(parent, id, title) {
    const s = el('section', { id: id, class: 'view' });
    s.appendChild(el('h3', {}, title));
    parent.appendChild(s);
    return s;
  }
  function svgBox(w, h) {
    return sv('svg', { width: w, height: h, viewBox: '0 0 ' + w + ' ' + h,
      class: 'chart' });
  }
  // Vertical bars with labels below: [label, value, title].
  function bars(items, w, h, unit) {
    const g = svgBox(w, h), n = Math.max(1, items.length);
    const max = Math.max(1, ...items.map((x) => x[1]));
    const bw = Math.max(2, Math.min(40, (w - 40) / n - 2));
    items.forEach(([label, v, title], i) => {
      const bh = (h - 40) * v / max, x = 40 + i * (bw + 2);
      const r = sv('rect', { x: x, y: h - 24 - bh, width: bw,
        height: Math.max(0.5, bh), fill: color(i), class: 'bar' });
      r.appendChild(sv('title', {}, title + ': ' + v + (unit || '')));
      g.appendChild(r);
      if (n <= 30) {
        g.appendChild(sv('text', { x: x + bw / 2, y: h - 12,
          'text-anchor': 'middle', 'font-size': 9 }, label));
        g.appendChild(sv('text', { x: x + bw / 2, y: h - 27 - bh,
          'text-anchor': 'middle', 'font-size': 9 }, fmtNum(v)));
      }
    });
    g.appendChild(sv('text', { x: 2, y: 10, 'font-size': 9 }, fmtNum(max) +
      (unit || '')));
    return g;
  }

  // ---- the views, from /api/bee's answer ----
  function counts(p, b, eidName) {
    const s = section(p, 'v-freq', 'frequency counter (records by event type)');
    s.appendChild(bars(b.counts.map(([eid, n, name]) =>
      [String(eid), n, 'eid ' + eid + ' ' + (name || eidName(eid))]),
    Math.min(900, 60 + b.counts.length * 42), 180));
    s.appendChild(table('v-counts', ['eid', 'count', 'name'],
      b.counts.map(([eid, n, name]) => [eid, n, name])));
  }
  function profile(p, b) {
    const s = section(p, 'v-prof', 'time profiler (exclusive time of ' +
      'blocks and ranges, seconds)');
    const g = svgBox(220, 220), tot = b.profile.reduce((a, x) => a + x.ns, 0);
    let a0 = -Math.PI / 2;
    b.profile.forEach((x, i) => {
      if (tot <= 0 || x.ns <= 0) return;
      const a1 = a0 + 2 * Math.PI * x.ns / tot, big = a1 - a0 > Math.PI;
      const pt = (a) => (110 + 100 * Math.cos(a)).toFixed(2) + ' ' +
        (110 + 100 * Math.sin(a)).toFixed(2);
      const d = x.ns >= tot ? 'M 10 110 A 100 100 0 1 1 210 110 A 100 100 ' +
        '0 1 1 10 110 Z' : 'M 110 110 L ' + pt(a0) + ' A 100 100 0 ' +
        (big ? 1 : 0) + ' 1 ' + pt(a1) + ' Z';
      const path = sv('path', { d: d, fill: color(i), stroke: '#fff',
        class: 'slice' });
      path.appendChild(sv('title', {}, x.name + ': ' + x.pct + ' %'));
      g.appendChild(path);
      a0 = a1;
    });
    const row = el('div', { class: 'vrow' });
    if (tot > 0) row.appendChild(g);
    const t = table('v-profile', ['id', 'count', 'mean', 'variance(s^2)',
      'total', '%', 'name'], b.profile.map((x) => [x.id, x.count, x.mean,
      x.variance, x.total, x.pct, x.name]));
    t.querySelectorAll('tr').forEach((tr, i) => {
      if (i > 0) tr.firstChild.style.borderLeft = '8px solid ' + color(i - 1);
    });
    row.appendChild(t);
    s.appendChild(row);
    if (!b.profile.length) s.appendChild(el('p', {}, 'no closed blocks'));
    if (b.unmatched) s.appendChild(el('p', {}, 'unmatched block events: ' +
      b.unmatched));
    if (b.unclosed) s.appendChild(el('p', {}, 'blocks still open at end: ' +
      b.unclosed));
  }
  function load(p, b, procName) {
    const s = section(p, 'v-load', 'load meter (records per second, ' +
      'per process)');
    const L = b.load, w = 900, h = 200, n = L.n;
    const secs = L.width / 1e9;
    let max = 1;
    for (const pr of L.procs) for (const c of pr.c) max = Math.max(max, c);
    const g = svgBox(w, h + 20);
    g.appendChild(sv('text', { x: 2, y: 10, 'font-size': 9 },
      fmtNum(max / secs) + '/s'));
    g.appendChild(sv('text', { x: w - 2, y: h + 16, 'font-size': 9,
      'text-anchor': 'end' }, fmtNs(L.width * n) + ' (' + n +
      ' buckets of ' + fmtNs(L.width) + ')'));
    L.procs.forEach((pr, i) => {
      const pts = pr.c.map((c, j) => (50 + (w - 60) * (j + 0.5) / n).toFixed(1) +
        ',' + (h - (h - 20) * c / max).toFixed(1));
      const line = sv('polyline', { points: pts.join(' '), fill: 'none',
        stroke: color(i), 'stroke-width': 1.5, class: 'load' });
      line.appendChild(sv('title', {}, procName(pr)));
      g.appendChild(line);
    });
    s.appendChild(g);
    const leg = el('div', { class: 'legend' });
    L.procs.forEach((pr, i) => {
      const k = el('span', {}, '\u25a0 ');
      k.style.color = color(i);
      leg.appendChild(k);
      leg.appendChild(document.createTextNode(procName(pr) + ' (' +
        pr.c.reduce((a, c) => a + c, 0) + ')  '));
    });
    s.appendChild(leg);
  }
  function messages(p, b) {
    const s = section(p, 'v-msg', 'message statistics');
    s.appendChild(el('p', {}, 'matched messages: ' + b.matched + ' of ' +
      b.sends + ' sends and ' + b.recvs + ' receives'));
    const ranks = [...new Set(b.pairs.flatMap((x) => [x[0], x[1]]))]
      .sort((a, c) => a - c);
    const row = el('div', { class: 'vrow' });
    if (ranks.length && ranks.length <= 64) {
      const c = Math.max(14, Math.min(40, 400 / ranks.length));
      const g = svgBox(30 + c * ranks.length, 30 + c * ranks.length);
      let max = 1;
      for (const x of b.pairs) max = Math.max(max, x[3]);
      ranks.forEach((r, i) => {
        g.appendChild(sv('text', { x: 30 + c * (i + 0.5), y: 22,
          'font-size': 9, 'text-anchor': 'middle' }, String(r)));
        g.appendChild(sv('text', { x: 26, y: 30 + c * (i + 0.7),
          'font-size': 9, 'text-anchor': 'end' }, String(r)));
      });
      g.appendChild(sv('text', { x: 2, y: 10, 'font-size': 9 },
        'bytes: row sends to column'));
      for (const x of b.pairs) {
        const i = ranks.indexOf(x[0]), j = ranks.indexOf(x[1]);
        const r = sv('rect', { x: 30 + c * j, y: 30 + c * i, width: c - 1,
          height: c - 1, class: 'cell', fill: 'rgba(200,0,0,' +
          (0.08 + 0.9 * x[3] / max).toFixed(3) + ')' });
        r.appendChild(sv('title', {}, 'rank ' + x[0] + ' to ' + x[1] + ': ' +
          x[3] + ' bytes in ' + x[2] + ' sends'));
        g.appendChild(r);
      }
      row.appendChild(g);
    }
    const hs = el('div', { id: 'v-lat' });
    hs.appendChild(el('div', {}, 'latency histogram (messages by ' +
      'latency, buckets doubling)'));
    row.appendChild(hs);
    if (!b.lathist.length) hs.appendChild(el('p', {}, 'no matched messages'));
    else {
      const lo = b.lathist[0][0], hi = b.lathist[b.lathist.length - 1][0];
      const items = [];
      for (let k = lo; k <= hi; k++) {
        const f = b.lathist.find((x) => x[0] === k);
        items.push([fmtNs(2 ** k), f ? f[1] : 0, 'latency ' + fmtNs(2 ** k) +
          ' to ' + fmtNs(2 ** (k + 1))]);
      }
      hs.appendChild(bars(items, 60 + items.length * 42, 180));
    }
    s.appendChild(row);
    s.appendChild(table('v-pairs', ['sender', 'receiver', 'sends', 'bytes',
      'receives', 'matched', 'mean latency(s)'], b.pairs));
  }
  function all(p, b, eidName, procName) {
    p.textContent = '';
    const sum = el('p', { id: 'v-sum' });
    sum.innerHTML = '';
    for (const [k, v] of [['records', b.records], ['span', b.span + ' s'],
      ['processes', b.processes], ['threads', b.threads]]) {
      sum.appendChild(document.createTextNode(k + ' '));
      sum.appendChild(el('b', { id: 'v-' + k }, String(v).replace(/ s$/, '')));
      sum.appendChild(document.createTextNode(k === 'span' ? ' s  ' : '  '));
    }
    p.appendChild(sum);
    counts(p, b, eidName);
    profile(p, b);
    load(p, b, procName);
    messages(p, b);
  }

  // ---- prove serve: the views of the page's selection ----
  const T = { key: null, timer: null, seq: 0, skip: 0, more: false,
    busy: false, base: '', q: '', seen: [] };
  // Rows as the API has them: indexes and ranges FIRST-END, '' for all.
  function rowList(shown, n) {
    if (shown.length === n) return '';
    const s = [...shown].sort((a, c) => a - c), out = [];
    for (let i = 0; i < s.length;) {
      let j = i;
      while (j + 1 < s.length && s[j + 1] === s[j] + 1) j++;
      out.push(j > i ? s[i] + '-' + (s[j] + 1) : String(s[i]));
      i = j + 1;
    }
    return out.join(',');
  }
  function panel() {
    let p = document.getElementById('views');
    if (!p) {
      p = el('div', { id: 'views' });
      document.body.insertBefore(p, document.querySelector('footer'));
    }
    return p;
  }
  async function tracerPage(fresh) {
    if (T.busy) return;
    T.busy = true;
    const seq = T.seq;
    try {
      const r = await fetchRetry(T.base + '&skip=' + T.skip + '&n=100&q=' +
        encodeURIComponent(T.q));
      const j = await r.json();
      if (r.status === 503) {
        // The server reads two other selections (each in a thread):
        // asked again a second later, unless another is asked by then.
        if (seq !== T.seq) return;
        T.busy = false;
        await new Promise((ok) => setTimeout(ok, 1000));
        if (seq === T.seq) await tracerPage(fresh);
        return;
      }
      if (!r.ok) throw new Error('tracer: ' + (j.error || r.status));
      if (seq !== T.seq) return;
      const tb = document.getElementById('v-tracer');
      if (fresh) tb.textContent = '';
      for (const [row, ts, node, pid, tid, eid, fields] of j.records) {
        const tr = el('tr', { 'data-row': row, 'data-ts': ts });
        for (const c of [ts, node, pid, tid, eid, T.name(eid),
          fields.join(' ')])
          tr.appendChild(el('td', {}, String(c)));
        tb.appendChild(tr);
      }
      T.skip += j.records.length;
      T.more = j.more;
      document.getElementById('v-tracer-n').textContent = T.skip +
        (j.more ? '+' : '') + ' records';
    } finally { T.busy = false; }
  }
  function tracer(p, f, sel, name) {
    const s = section(p, 'v-trace', 'tracer (records of the selection)');
    const q = el('input', { id: 'v-tracer-q', placeholder: 'event type',
      size: 12, title: 'only records whose event type (eid, name, format) ' +
        'holds this' });
    q.value = T.q;
    s.appendChild(q);
    s.appendChild(el('span', { id: 'v-tracer-n' }));
    const box = el('div', { class: 'tracer' });
    const t = el('table', { class: 'vt' });
    const h = el('tr');
    for (const c of ['ts', 'node', 'pid', 'tid', 'eid', 'name', 'fields'])
      h.appendChild(el('th', {}, c));
    t.appendChild(h);
    const tb = el('tbody', { id: 'v-tracer' });
    t.appendChild(tb);
    box.appendChild(t);
    s.appendChild(box);
    T.base = '/api/tracer?f=' + f + sel;
    T.name = name;
    const restart = () => {
      T.seq++; T.skip = 0; T.more = false; T.busy = false;
      return tracerPage(true);
    };
    q.addEventListener('change', () => {
      T.q = q.value; restart().catch(report);
    });
    box.addEventListener('scroll', () => {
      if (T.more && box.scrollTop + box.clientHeight > box.scrollHeight - 40)
        tracerPage(false).catch(report);
    });
    return restart();
  }
  let report = (e) => { throw e; };
  async function refresh(S) {
    const f = S.f, rows = rowList(S.rowsShown, S.meta.rows.length);
    const from = S.first + BigInt(Math.max(0, Math.floor(S.from)));
    const to = S.first + BigInt(Math.max(0, Math.ceil(S.to)));
    const sel = '&from=' + from + '&to=' + (to > from ? to : from + 1n) +
      (rows ? '&rows=' + rows : '');
    // A job followed: the same selection with more records is asked again
    // (the views follow the data, in the range the page shows).
    const key = sel + f + ':' + S.meta.records;
    if (key === T.key) return;
    T.key = key;
    if (!S.rowsShown.length) {
      T.seq++;
      panel().textContent = 'no rows shown: no views';
      return;
    }
    const seq = ++T.seq;
    const r = await fetchRetry('/api/bee?f=' + f + sel + '&load=100');
    const b = await r.json();
    if (r.status === 503) {
      // The server computes others (each in a thread): asked again.
      if (seq !== T.seq) return;
      T.key = null;
      panel().dataset.busy = '1';
      T.timer = setTimeout(() => { refresh(S).catch(report); }, 1000);
      return;
    }
    if (!r.ok) throw new Error('views: ' + (b.error || r.status));
    if (seq !== T.seq) return;
    const p = panel();
    const eidName = (eid) => {
      const e = S.meta.eids[String(eid)];
      return e ? e.name : '';
    };
    all(p, b, eidName, (pr) => {
      const row = S.meta.rows.find((x) => x.node === pr.node &&
        x.pid === pr.pid);
      return (row && row.rank !== undefined ? 'rank ' + row.rank + ' ' : '') +
        (pr.prog || (row && row.prog) || 'pid') + ' (' + pr.pid + ')';
    });
    p.dataset.ready = '1';
    // The records each refresh counted, in order (for scripts).
    T.seen.push(b.records);
    p.dataset.records = T.seen.join(' ');
    p.dataset.sel = sel.slice(1);
    await tracer(p, f, sel, eidName);
  }
  // Called when the page's view changes: the views follow it, once it has
  // settled; now (a job followed: new records): at once, the promise
  // kept until they are shown.  They come from the server's index in
  // milliseconds, whatever its size, a file's or a followed job's (its
  // tables grow with it); read from the files only when the server had
  // no memory for them (meta.bee_file), in a worker thread (503: busy,
  // asked again).
  function update(S, onError, now) {
    report = onError;
    clearTimeout(T.timer);
    if (now) return refresh(S).catch(onError);
    T.timer = setTimeout(() => { refresh(S).catch(onError); }, 250);
  }

  // ---- prove report: the data built into the page ----
  function overview(p, meta, v) {
    const rows = meta.rows.slice(v.r0, v.r0 + v.rows.length);
    const DH = 6, LW = 220, W = v.width;
    const y = [];
    let h = 18, prev = null;
    rows.forEach((r, j) => {
      if (r.node + ':' + r.pid !== prev) h += 4;
      prev = r.node + ':' + r.pid;
      y[j] = h;
      h += Math.max(1, r.depth) * DH + 6;
    });
    const g = svgBox(LW + W, h + 4);
    g.setAttribute('id', 'v-overview');
    rows.forEach((r, j) => {
      const label = (r.host || 'node ' + r.node) + ' ' +
        (r.rank !== undefined ? 'rank ' + r.rank : (r.prog || 'pid ' +
          r.pid)) + ' ' + r.pid + '/' + r.tid;
      g.appendChild(sv('text', { x: 2, y: y[j] + 8, 'font-size': 9 },
        label.slice(0, 40)));
      g.appendChild(sv('rect', { x: LW, y: y[j], width: W,
        height: Math.max(1, r.depth) * DH + 4, fill: '#f6f6f6' }));
    });
    for (const [node, x0, x1] of v.phases)
      rows.forEach((r, j) => {
        if (r.node === node)
          g.appendChild(sv('rect', { x: LW + x0, y: y[j], height: DH * 2,
            width: Math.max(1, x1 - x0), fill: 'rgba(40,80,255,0.15)' }));
      });
    v.rows.forEach((row, j) => {
      row.d.forEach((segs, d) => {
        for (const [x0, x1, st] of segs) {
          const e = sv('rect', { x: LW + x0, y: y[j] + d * DH,
            width: Math.max(1, x1 - x0), height: DH - 1, fill: color(st),
            class: 'state' });
          e.appendChild(sv('title', {}, meta.states[st]));
          g.appendChild(e);
        }
      });
      const my = y[j] + Math.max(1, row.d.length) * DH;
      for (const [x, n, , , kind] of row.m)
        g.appendChild(sv('rect', { x: LW + x, y: my, width: 1.5,
          height: 4, fill: kind === 4 || kind === 5 ? '#d60' :
            (n > 1 ? '#222' : '#666'), class: 'mark' }));
    });
    const fade = Math.max(0.05, Math.min(0.7, 150 / (v.arrows.length + 1)));
    for (const [rs, xs, rr, xr, n, , , unsure] of v.arrows) {
      const js = rs - v.r0, jr = rr - v.r0;
      if (y[js] === undefined || y[jr] === undefined) continue;
      const a = { x1: LW + xs, y1: y[js] + DH, x2: LW + xr,
        y2: y[jr] + DH, stroke: 'rgb(200,0,0)', class: 'arrow',
        'stroke-opacity': Math.min(0.9, fade * (1 + Math.log2(n))).toFixed(3),
        'stroke-width': Math.min(3, 1 + Math.log2(n) / 2).toFixed(2) };
      // Dashed: latency less than the clocks' bounds, order not certain.
      if (unsure) a['stroke-dasharray'] = '4 3';
      g.appendChild(sv('line', a));
    }
    for (const [row, node, pid, x, count] of v.losses)
      rows.forEach((r, j) => {
        if ((row >= 0 && row - v.r0 === j) || (row < 0 && r.node === node &&
            r.pid === pid))
          g.appendChild(sv('path', { d: 'M ' + (LW + x) + ' ' + y[j] +
            ' l -4 8 l 8 0 z', fill: '#e00', class: 'loss' },
          ''));
      });
    g.appendChild(sv('text', { x: LW, y: 12, 'font-size': 10 },
      '0'));
    g.appendChild(sv('text', { x: LW + W, y: 12, 'font-size': 10,
      'text-anchor': 'end' },
    fmtNs(Number(BigInt(meta.last) - BigInt(meta.first)) + 1)));
    p.appendChild(g);
    if (v.truncated)
      p.appendChild(el('p', {}, 'some detail left out (too many to draw)'));
  }
  function reportPage(d) {
    const onError = (e) => {
      document.getElementById('errors').textContent += 'error: ' + e + '\n';
    };
    window.addEventListener('error', (e) => onError(e.message));
    try {
      document.getElementById('r-file').textContent = d.meta.file;
      const s = document.getElementById('summary');
      s.appendChild(el('p', {}, 'trace ' + d.meta.file + ': ' +
        d.bee.records + ' records over ' + d.bee.span + ' s, ' +
        d.bee.processes + ' processes, ' + d.bee.threads + ' threads, ' +
        d.bee.losses + ' lost, ' + d.bee.matched + ' messages matched; ' +
        (d.meta.ended ? 'complete' : 'no #END line: may be truncated')));
      overview(document.getElementById('overview'), d.meta, d.view);
      const eidName = (eid) => {
        const e = d.meta.eids[String(eid)];
        return e ? e.name : '';
      };
      all(document.getElementById('views'), d.bee, eidName, (pr) =>
        (pr.rank !== undefined ? 'rank ' + pr.rank + ' ' : '') +
        (pr.prog || 'pid') + ' (' + pr.pid + ')');
      document.body.dataset.ready = '1';
    } catch (e) { onError(e); }
  }

  return { update: update, report: reportPage, rowList: rowList };
})();
