// Shared pieces of the viewer's browser tests: where the binaries are, a
// checked assertion that logs, waiting on the page, `tracetable serve` on a
// free port and headless Debian chromium (playwright-core, no download).
'use strict';

const { chromium } = require('playwright-core');
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');

const repo = path.resolve(__dirname, '..', '..');
const build = path.resolve(process.argv[2] || process.env.TT_BUILD || path.join(repo, 'build'));
const tracetable = path.join(build, 'cli', 'tracetable');
const gen = path.join(build, 'bench', 'tt_gen_trace');
const artifacts = path.join(__dirname, 'artifacts');
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';

function check(cond, msg) {
  if (!cond) throw new Error('check failed: ' + msg);
  console.log('ok -', msg);
}

async function waitFor(page, fn, arg, what, timeout = 20000) {
  try {
    await page.waitForFunction(fn, arg, { timeout, polling: 50 });
  } catch (e) {
    const tt = await page.evaluate(() => ({ ...window.__tt, S: undefined, cache: undefined, axis: undefined, requests: window.__tt.requests.slice(-5) }));
    throw new Error(`timed out waiting for ${what}; __tt=${JSON.stringify(tt)}`);
  }
}

function startServer(table) {
  return new Promise((resolve, reject) => {
    const proc = spawn(tracetable, ['serve', table, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error('server did not start: ' + out)), 15000);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /serving .* at (http:\/\/[^ ]+\/)/.exec(out);
      if (m) { clearTimeout(timer); resolve({ proc, url: m[1] }); }
    });
    proc.on('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
  });
}

function launch() {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--no-first-run', '--disable-sync', '--disable-dev-shm-usage'],
  });
}

// Collects the page's errors and console errors into `errors`; console
// errors from URLs matching `ignoreUrl` (optional) are left out.
function collectErrors(page, errors, ignoreUrl) {
  page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (ignoreUrl && ignoreUrl.test((m.location() || {}).url || '')) return;
    errors.push('console: ' + m.text());
  });
}

// The end every test shares: no page errors, then PASS with the time taken.
function pass(errors, t0) {
  check(errors.length === 0, `no page errors${errors.length ? ': ' + errors.join('; ') : ''}`);
  console.log(`PASS in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

// Closes the browser (if it started), stops the server, removes the scratch folder.
async function cleanUp(browser, proc, dir) {
  if (browser) await browser.close();
  proc.kill('SIGINT');
  fs.rmSync(dir, { recursive: true, force: true });
}

// Runs a test's main(): a thrown check or error is a FAIL and a non-zero exit.
function run(main) {
  main().catch((e) => {
    console.error('FAIL:', e.message);
    process.exit(1);
  });
}

module.exports = { repo, build, tracetable, gen, artifacts, check, waitFor, startServer, launch, collectErrors, pass, cleanUp, run };
