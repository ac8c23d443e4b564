// Issue 12 on a big table (never run by ctest: the table is too big for CI):
// the seven interactions of tests/viewer/interactions_test.js — axis ticks
// at deep zoom, range-selection stats, flows, keys, search, resize and table
// switch, pins/URL/side panel/details — in headless chromium (1600x900)
// against `tracetable serve BIG SMALL`. Each interaction is timed (input to
// the page's answer), checked for what it must show, and screenshotted
// into --out; a failure is reported and the next one still runs.
//
// usage: node bench/viewer/interactions_100m.js --build BUILD --out DIR BIG.tracetable SMALL.tracetable
'use strict';

const path = require('path');
const fs = require('fs');
const { spawn } = require('child_process');

const repo = path.resolve(__dirname, '..', '..');
const { chromium } = require(path.join(repo, 'tests', 'viewer', 'node_modules', 'playwright-core'));

const ready = () => document.body.dataset.viewState === 'ready' && window.__tt && window.__tt.readySeq === window.__tt.viewSeq;

function args(argv) {
  const o = { build: path.join(repo, 'build'), out: '/tmp/tt-interactions-100m', tables: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--build') o.build = argv[++i];
    else if (argv[i] === '--out') o.out = argv[++i];
    else o.tables.push(argv[i]);
  }
  if (o.tables.length !== 2) throw new Error('usage: interactions_100m.js --build BUILD --out DIR BIG SMALL');
  return o;
}

function serve(cli, tables) {
  return new Promise((resolve, reject) => {
    const proc = spawn(cli, ['serve', ...tables, '--port', '0', '--cache-mb', '256'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /serving .* at (http:\/\/[^ ]+\/)/.exec(out);
      if (m) resolve({ proc, url: m[1] });
    });
    proc.on('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
  });
}

async function main() {
  const o = args(process.argv.slice(2));
  fs.mkdirSync(o.out, { recursive: true });
  const [big, small] = o.tables.map((t) => path.basename(t).replace(/\.tracetable$/, ''));
  const { proc, url } = await serve(path.join(o.build, 'cli', 'tracetable'), o.tables);
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const results = [];
  const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const wait = (fn, arg, timeout = 60000) => page.waitForFunction(fn, arg, { timeout, polling: 20 });
  const shot = (name) => page.screenshot({ path: path.join(o.out, name) });
  // Runs one interaction: fn returns {ms, note} (ms: input to answer).
  async function step(name, fn) {
    try {
      const r = await fn();
      results.push({ name, ok: true, ...r });
      console.error(`ok   ${name}: ${r.ms} ms  ${r.note}`);
    } catch (e) {
      results.push({ name, ok: false, note: String(e.message).split('\n')[0].slice(0, 300) });
      console.error(`FAIL ${name}: ${e.message.split('\n')[0].slice(0, 300)}`);
      await shot(`fail-${name.replace(/\W+/g, '-')}.png`).catch(() => {});
    }
  }
  const timed = async (act, done, arg) => {
    const t = Date.now();
    await act();
    await wait(done, arg);
    return Date.now() - t;
  };
  const setView = (a, b) => page.evaluate(([a, b]) => window.__tt.setView(window.__tt.axis.origin + a, window.__tt.axis.origin + b), [a, b]);
  try {
    const t0 = Date.now();
    await page.goto(`${url}#table=${big}`);
    await wait(ready);
    results.push({ name: 'open', ok: true, ms: Date.now() - t0, note: 'first ready' });
    const span = await page.evaluate(() => window.__tt.axis.span());
    const mid = span * 0.37;

    await step('1 axis ticks at deep zoom', async () => {
      let ms = 0;
      const seen = [];
      for (const [w, f] of [[1.1, 'ix-axis-1us.png'], [0.01, 'ix-axis-10ns.png']]) {
        ms = Math.max(ms, await timed(() => setView(mid, mid + w), ready));
        const st = await page.evaluate(() => ({ ticks: window.__tt.ticks, range: document.getElementById('range').textContent }));
        if (st.ticks.length < 3 || new Set(st.ticks).size !== st.ticks.length) throw new Error(`ticks ${st.ticks.join(' | ')}`);
        seen.push(`${st.ticks[0]} .. ${st.ticks[st.ticks.length - 1]} (${st.ticks.length})`);
        await shot(f);
      }
      return { ms, note: seen.join('; ') };
    });

    await step('2 range-selection stats', async () => {
      await setView(mid, mid + 2000);
      await wait(ready);
      const tb = await page.locator('#tracks').boundingBox();
      const n = await page.evaluate(() => window.__tt.statsLoaded || 0);
      const ms = await timed(async () => {
        await page.keyboard.down('Shift');
        await page.mouse.move(tb.x + 220 + (tb.width - 220) * 0.2, tb.y + 100);
        await page.mouse.down();
        await page.mouse.move(tb.x + 220 + (tb.width - 220) * 0.7, tb.y + 100, { steps: 5 });
        await page.mouse.up();
        await page.keyboard.up('Shift');
      }, (n) => (window.__tt.statsLoaded || 0) > n && window.__tt.stats.range, n);
      const st = await page.evaluate(() => ({ names: window.__tt.stats.names.length, truncated: window.__tt.stats.truncated,
        count: window.__tt.stats.names.reduce((s, x) => s + x.count, 0), a: window.__tt.stats.start_us, b: window.__tt.stats.end_us }));
      if (!st.names) throw new Error('no names in the range statistics');
      await shot('ix-range-stats.png');
      await page.keyboard.press('Escape');
      return { ms, note: `${st.names} names, ${st.count} events over ${(st.b - st.a).toFixed(1)} us${st.truncated ? ' (truncated)' : ''}` };
    });

    await step('3 flows', async () => {
      await setView(mid, mid + 500);
      await wait(ready);
      const fl = await page.evaluate(() => window.__tt.flows);
      const ev = await page.evaluate(() => {
        for (const a of window.__tt.flows.arrows) return { id: a.from };
        return null;
      });
      if (!fl.drawn && !fl.bundles.length) throw new Error(`no flows drawn in a 500 us view (${JSON.stringify({ total: fl.total, inView: fl.inView })})`);
      await shot('ix-flows.png');
      // Select a slice with a flow out and follow it with "]".
      const target = await page.evaluate(() => {
        const a = window.__tt.flows.arrows.find((x) => !x.far);
        const r = document.getElementById('tracks').getBoundingClientRect();
        return a ? { x: r.x + a.x0 - 2, y: r.y + a.y0 - 4, id: a.from } : null;
      });
      let ms = 0, note = `${fl.drawn} arrows, ${fl.bundles.length} bundles of ${fl.inView} flows in view`;
      if (target) {
        await page.mouse.click(target.x, target.y);
        await wait(() => window.__tt.selected, null, 10000).catch(() => {});
        const sel = await page.evaluate(() => window.__tt.selected && window.__tt.selected.name);
        if (sel) {
          ms = await timed(() => page.keyboard.press(']'), (s) => window.__tt.selected && window.__tt.selected.name !== s && document.body.dataset.viewState === 'ready', sel);
          note += `; "]" from ${sel} to ${await page.evaluate(() => window.__tt.selected.name)}`;
          await shot('ix-flow-follow.png');
        }
      }
      return { ms, note };
    });

    await step('4 keys', async () => {
      await page.keyboard.press('0');
      await wait(ready);
      const full = await page.evaluate(() => window.__tt.axis.span());
      await page.focus('#table');
      const ms = await timed(() => page.keyboard.press('w'), ready);
      const after = await page.evaluate(() => ({ span: window.__tt.axis.span(), table: window.__tt.S.table.name }));
      if (Math.abs(after.span - full / 2) > full * 1e-6 || after.table !== big) throw new Error('"w" with the drop-down focused');
      await page.keyboard.press('?');
      const help = await page.evaluate(() => !document.getElementById('help').hidden);
      await shot('ix-keys.png');
      await page.keyboard.press('Escape');
      await page.keyboard.press('/');
      const slash = await page.evaluate(() => document.activeElement.id === 'search');
      await page.keyboard.press('Escape');
      if (!help || !slash) throw new Error(`help ${help}, "/" ${slash}`);
      return { ms, note: '"w" with the drop-down focused zooms; "?" lists keys; "/" focuses search' };
    });

    await step('5 search', async () => {
      await setView(mid, mid + 2000);
      await wait(ready);
      const landed = await page.evaluate(() => window.__tt.searchLanded);
      await page.fill('#search', 'all-reduce');
      const ms = await timed(() => page.press('#search', 'Enter'), (n) => window.__tt.searchLanded > n && document.body.dataset.viewState === 'ready', landed);
      await wait(() => /total/.test(document.getElementById('search-count').textContent), null, 30000).catch(() => {});
      const st = await page.evaluate(() => ({ text: document.getElementById('search-count').textContent, m: window.__tt.lastMatch && window.__tt.lastMatch.name }));
      await shot('ix-search.png');
      const t = Date.now();
      await page.keyboard.press('Enter');
      await wait((n) => window.__tt.searchLanded > n + 1 && document.body.dataset.viewState === 'ready', landed);
      const next = Date.now() - t;
      await page.keyboard.press('Escape');
      return { ms, note: `landed on ${st.m}; "${st.text}"; next match ${next} ms` };
    });

    await step('6 resize and table switch', async () => {
      let ms = 0;
      for (const [w, f] of [[900, 'ix-narrow.png'], [1920, 'ix-wide.png']]) {
        ms = Math.max(ms, await timed(() => page.setViewportSize({ width: w, height: 800 }), ready));
        const b = await page.evaluate(() => {
          const r = (id) => document.getElementById(id).getBoundingClientRect();
          return { axis: r('axis'), side: r('side') };
        });
        if (Math.abs(b.axis.right - b.side.left) > 1) throw new Error(`at ${w} px the axis ends at ${b.axis.right}, the side panel starts at ${b.side.left}`);
        await shot(f);
      }
      await page.setViewportSize({ width: 1600, height: 900 });
      await wait(ready);
      const sw = await timed(() => page.selectOption('#table', small), (n) => window.__tt.S.table.name === n && document.body.dataset.viewState === 'ready', small);
      const back = await timed(() => page.evaluate((b) => { location.hash = `#table=${b}`; }, big), (n) => window.__tt.S.table.name === n && document.body.dataset.viewState === 'ready', big);
      await shot('ix-switched-back.png');
      return { ms: Math.max(ms, sw, back), note: `resize ≤ ${ms} ms; switch to ${small} ${sw} ms, back by URL ${back} ms` };
    });

    await step('7 pins, URL, side panel, details', async () => {
      await setView(mid, mid + 500);
      await wait(ready);
      const ev = await page.evaluate(() => window.__tt.visibleEvent(8));
      if (!ev) throw new Error('no event on screen to click');
      const ms = await timed(() => page.mouse.click(ev.x, ev.y), (id) => window.__tt.selected && window.__tt.selected.id === id &&
        document.getElementById('details').textContent.includes(window.__tt.selected.name), ev.id);
      await shot('ix-details.png');
      const pin = await timed(() => page.keyboard.press('p'), () => document.body.dataset.viewState === 'ready' && window.__tt.S.rows[0].pinned);
      await shot('ix-pinned.png');
      await page.click('#side-btn');
      await wait(ready);
      const folded = await page.evaluate(() => document.getElementById('side').hidden);
      await shot('ix-side-folded.png');
      await page.click('#side-btn');
      await page.click('#link-btn');
      const link = await page.evaluate(() => window.__tt.link);
      const p2 = await browser.newPage({ viewport: { width: 1600, height: 900 } });
      const t = Date.now();
      await p2.goto(link);
      await p2.waitForFunction(ready, null, { timeout: 60000, polling: 20 });
      const opened = Date.now() - t;
      const pins = await p2.evaluate(() => window.__tt.S.pins.length);
      await p2.screenshot({ path: path.join(o.out, 'ix-link-opened.png') });
      await p2.close();
      if (!folded || pins !== 1) throw new Error(`side folded ${folded}, pins in the link ${pins}`);
      return { ms: Math.max(ms, pin), note: `details ${ms} ms (${ev.name}), pin ${pin} ms, link opened in ${opened} ms` };
    });
  } finally {
    await browser.close();
    proc.kill('SIGINT');
  }
  results.push({ name: 'page errors', ok: errors.length === 0, note: errors.slice(0, 3).join(' | ') });
  console.log(JSON.stringify({ table: big, results }));
  process.exit(results.every((r) => r.ok) ? 0 : 1);
}

main().catch((e) => { console.error('interactions_100m:', e.stack || e.message); process.exit(2); });
