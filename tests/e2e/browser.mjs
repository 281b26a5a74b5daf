// browser.mjs -- what the dashboard's browser tests (dashboard*.test.mjs)
// share, so each states only what it checks: the server they were given
// (HUDDLE_PORT, HUDDLE_SHOTS, CHROMIUM, set by lib-browser.sh's
// browser_run), its REST API as the truth, and Debian's headless Chromium
// through playwright-core with a fresh profile of its own.
//   api(method, path, body)  one request; {status, headers, text, json}
//                            (json null when the body is not JSON)
//   openBrowser(viewport)    {ctx, page, close}: a persistent context on a
//                            new temporary profile, its first page, and
//                            close() that ends it and removes the profile
//   onConsoleError(page, f)  f(text, url) for each console error and
//                            (text "uncaught: ...", url '') page error
//   numberedShots(pageOf)    shot(name): pageOf()'s screenshot saved as
//                            HUDDLE_SHOTS/NN-name.png, NN = 01, 02, ...
//   gotoLive(page, team, timeout)
//                            page shows /teams/<team> and its live stream
//                            is connected (#conn live; waited for up to
//                            timeout ms, a bound, never a measure of speed)
//   dashboardPages({team, timeout, onError})
//                            one browser for the whole test file, opened in
//                            node:test's before() and closed in its after(),
//                            and open(viewport = DESKTOP, t = team): a new
//                            page of it at viewport, its console errors
//                            passed to onError (as onConsoleError's f),
//                            gone live on team t (gotoLive)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {before, after} from 'node:test';

import {chromium} from 'playwright-core';

export const PORT = Number(process.env.HUDDLE_PORT);
export const BASE = `http://127.0.0.1:${PORT}`;
export const SHOTS = process.env.HUDDLE_SHOTS;
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const DESKTOP = {width: 1440, height: 900};
export const PHONE = {width: 390, height: 844};

export async function api(method, p, body) {
  const res = await fetch(BASE + p, {
    method,
    headers: body === undefined ? {} : {'Content-Type': 'application/json'},
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch (e) { /* not JSON */ }
  return {status: res.status, headers: res.headers, text, json};
}

export async function openBrowser(viewport = DESKTOP) {
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'huddle-chromium-'));
  let ctx;
  try {
    ctx = await chromium.launchPersistentContext(userDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--no-first-run'],
      viewport,
      colorScheme: 'light',
    });
  } catch (e) {
    fs.rmSync(userDir, {recursive: true, force: true});
    throw e;
  }
  const page = ctx.pages()[0] || await ctx.newPage();
  const close = async () => {
    await ctx.close();
    fs.rmSync(userDir, {recursive: true, force: true});
  };
  return {ctx, page, close};
}

export function numberedShots(pageOf) {
  let n = 0;
  return async (name) => {
    n++;
    await pageOf().screenshot({path: path.join(SHOTS, `${String(n).padStart(2, '0')}-${name}.png`)});
  };
}

export function onConsoleError(page, f) {
  page.on('console', (m) => {
    if (m.type() === 'error') f(m.text(), m.location().url || '');
  });
  page.on('pageerror', (e) => f(`uncaught: ${e.message}`, ''));
}

export async function gotoLive(page, team, timeout) {
  await page.goto(`${BASE}/teams/${team}`);
  await page.locator('#conn[data-state="live"]').waitFor({timeout});
}

export function dashboardPages({team, timeout, onError}) {
  let browser;
  before(async () => {
    browser = await openBrowser();
  });
  after(() => browser?.close());
  return async (viewport = DESKTOP, t = team) => {
    const page = await browser.ctx.newPage();
    await page.setViewportSize(viewport);
    if (onError) onConsoleError(page, onError);
    await gotoLive(page, t, timeout);
    return page;
  };
}
