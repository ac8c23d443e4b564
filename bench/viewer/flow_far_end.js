// bench/viewer/flow_far_end.js — one run, in headless chromium, of following
// a flow whose far end is outside the loaded tiles on a tt_gen_trace table
// (--hosts 2 --devices 4, seed 1): flow 200000 goes from TransferToDevice on
// HostToDevice:1 to infeed.837 3 µs later (100M events; the view below is
// 1.5 µs). Prints the time from the click to the far end being listed and
// drawn, and of "go to"; screenshots to tests/viewer/artifacts/4x-*.png.
// Not part of ctest (it needs the 100M table).
//   node bench/viewer/flow_far_end.js TABLE [BUILD_DIR]
const path = require('path');
const table = process.argv[2];
process.argv[2] = process.argv[3];  // the harness reads the build folder there
const { check, waitFor, startServer, launch } = require('../../tests/viewer/harness');
const shots = path.join(__dirname, '..', '..', 'tests', 'viewer', 'artifacts');
(async () => {
  const { proc, url } = await startServer(table);
  const browser = await launch();
  try {
    const page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
    // flow 200000: TransferToDevice (tid 201) at 28120087.587 -> infeed.837 3 us later
    await page.goto(`${url}#table=${path.basename(table, '.tracetable')}&start=28120086.9&end=28120088.4`);
    const ready = () => document.body.dataset.viewState === 'ready' && window.__tt.readySeq === window.__tt.viewSeq;
    let t = Date.now();
    await waitFor(page, ready, null, 'view', 60000);
    console.log('view ready ms', Date.now() - t);
    const ev = await page.evaluate(() => window.__tt.visibleEvent(6, 'TransferToDevice'));
    check(ev, 'TransferToDevice drawn ' + JSON.stringify(ev));
    t = Date.now();
    await page.mouse.click(ev.x, ev.y);
    await waitFor(page, () => (window.__tt.flowList || []).some((x) => x.dir === 'out') && window.__tt.flows.arrows.some((r) => r.mine), null, 'far end', 30000);
    console.log('click -> far end listed and drawn ms', Date.now() - t, JSON.stringify(await page.evaluate(() => ({ list: window.__tt.flowList, far: window.__tt.flows.far, mine: window.__tt.flows.arrows.filter((r) => r.mine) }))));
    await page.screenshot({ path: path.join(shots, '40-100m-far-end.png') });
    t = Date.now();
    await page.click('#flows button[data-flow="0"]');
    await waitFor(page, () => window.__tt.selected && /infeed/.test(window.__tt.selected.name) && document.body.dataset.viewState === 'ready', null, 'go to', 30000);
    console.log('go to -> selected and ready ms', Date.now() - t);
    await page.screenshot({ path: path.join(shots, '41-100m-go-to.png') });
    // Coarse: 20 ms around it.
    await page.evaluate(() => window.__tt.setView(window.__tt.axis.view[0] - 10000, window.__tt.axis.view[0] + 10000));
    await waitFor(page, ready, null, 'coarse', 60000);
    const fi = await page.evaluate(() => window.__tt.flows);
    console.log('20 ms view: inView', fi.inView, 'bundles', fi.bundles.length, 'lone drawn', fi.arrows.filter((r) => !r.mine).length);
    await page.screenshot({ path: path.join(shots, '42-100m-bundles.png') });
  } finally {
    await browser.close();
    proc.kill('SIGINT');
  }
})().catch((e) => { console.error('FAIL', e.message.slice(0, 500)); process.exit(1); });
