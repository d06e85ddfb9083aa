// SPDX-License-Identifier: MIT
// test/bee_select.js: selects a range in prove serve's page as a user does
// (a shift-drag on the timeline, by the DevTools protocol on a pipe to
// headless Chromium) and prints, as JSON, what BEE's views showed before
// and after: the selection each asked for (data-sel), the records and the
// frequency counter's rows.  It fails unless the views after are those of
// the range the drag selected (the page's range once the mouse was
// released: "made", with the last record's time the page knew then).  A
// job followed: the views of that range asked again at the next
// collection read ("later", null if none came in 20 s).  Used by
// test/serve_views.sh and test/serve_livebee.sh.
// Usage: node bee_select.js URL PROFILE_DIR [FROM_FRACTION TO_FRACTION]
'use strict';
const { spawn } = require('child_process');

const [url, profile, fa, fb] = process.argv.slice(2);
const args = ['--headless', '--disable-gpu', '--hide-scrollbars',
  '--remote-debugging-pipe', '--user-data-dir=' + profile,
  '--window-size=1400,2400', 'about:blank'];
if (process.getuid && process.getuid() === 0) args.unshift('--no-sandbox');
const ch = spawn('chromium', args,
  { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] });
const out = ch.stdio[3], inp = ch.stdio[4];
let id = 0, buf = '';
const waiting = new Map();
inp.on('data', (d) => {
  buf += d.toString();
  let k;
  while ((k = buf.indexOf('\0')) >= 0) {
    const m = JSON.parse(buf.slice(0, k));
    buf = buf.slice(k + 1);
    if (m.id !== undefined && waiting.has(m.id)) {
      const w = waiting.get(m.id);
      waiting.delete(m.id);
      if (m.error) w.no(new Error(JSON.stringify(m.error)));
      else w.ok(m.result);
    }
  }
});
function send(method, params, sessionId) {
  const m = { id: ++id, method, params: params || {} };
  if (sessionId) m.sessionId = sessionId;
  out.write(JSON.stringify(m) + '\0');
  return new Promise((ok, no) => waiting.set(m.id, { ok, no }));
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function fail(msg) {
  process.stderr.write('bee_select: ' + msg + '\n');
  ch.kill();
  process.exit(1);
}

async function main() {
  const { targetId } = await send('Target.createTarget', { url });
  const { sessionId } = await send('Target.attachToTarget',
    { targetId, flatten: true });
  const ev = async (expr) => (await send('Runtime.evaluate',
    { expression: expr, returnByValue: true }, sessionId)).result.value;
  // What the views show: their selection, records, frequency counter.
  const state = `(() => {
    const v = document.getElementById('views');
    const e = document.getElementById('errors');
    const rows = [...document.querySelectorAll('#v-freq tr')].slice(1)
      .map((r) => [...r.cells].map((c) => c.textContent));
    return { ready: v ? v.dataset.ready || '' : '',
      seen: v ? v.dataset.records || '' : '', sel: v ? v.dataset.sel || ''
      : '', records: (document.getElementById('v-records') || {})
      .textContent, freq: rows, errors: e ? e.textContent : '',
      button: !!document.getElementById('v-update') };
  })()`;
  const until = async (what, ok) => {
    let s = null;
    for (let i = 0; i < 600; i++) {
      s = await ev(state);
      if (s.errors) fail('script error: ' + s.errors);
      if (ok(s)) return s;
      await sleep(100);
    }
    fail('timed out waiting for ' + what + '; the views are of ' +
      (s.sel || 'nothing yet'));
  };
  const before = await until('the views', (s) => s.ready === '1' &&
    s.seen !== '');
  // A shift-drag across the timeline from fa to fb of its width.
  const r = await ev(`(() => { const b = document.getElementById('view')
    .getBoundingClientRect(); return [b.left, b.top, b.width, b.height];
  })()`);
  const y = r[1] + Math.min(20, r[3] / 2);
  const x0 = r[0] + r[2] * parseFloat(fa || '0.3');
  const x1 = r[0] + r[2] * parseFloat(fb || '0.32');
  const mouse = (type, x) => send('Input.dispatchMouseEvent', { type, x, y,
    button: 'left', buttons: type === 'mouseReleased' ? 0 : 1,
    clickCount: 1, modifiers: 8 }, sessionId);
  await mouse('mousePressed', x0);
  for (let k = 1; k <= 5; k++) await mouse('mouseMoved', x0 + (x1 - x0) * k / 5);
  await mouse('mouseReleased', x1);
  // The range the release set, as the views ask for it (app.js's S).
  const made = await ev(`(() => {
    const f = S.first + BigInt(Math.max(0, Math.floor(S.from)));
    const t = S.first + BigInt(Math.max(0, Math.ceil(S.to)));
    const rows = Views.rowList(S.rowsShown, S.meta.rows.length);
    return { sel: 'from=' + f + '&to=' + (t > f ? t : f + 1n) +
      (rows ? '&rows=' + rows : ''), last: S.meta.last,
      live: document.body.dataset.liveState || '' };
  })()`);
  const after = await until('the views of the range selected, ' + made.sel,
    (s) => s.sel === made.sel);
  // Following: the views of the range asked again with the next records.
  let later = null;
  if (made.live === 'following') {
    const n = after.seen.split(' ').length;
    for (let i = 0; i < 200 && !later; i++) {
      const s = await ev(state);
      if (s.errors) fail('script error: ' + s.errors);
      if (s.seen.split(' ').length > n) later = s;
      else await sleep(100);
    }
    if (later && later.sel !== made.sel)
      fail('the page moved the range selected, ' + made.sel + ', to ' +
        later.sel);
  }
  process.stdout.write(JSON.stringify({ before, made, after, later }) +
    '\n');
  ch.kill();
  process.exit(0);
}
main().catch((e) => fail(e.stack || String(e)));
