// dashboard-progress.test.mjs -- progress and cancel on the dashboard, in
// Debian's headless Chromium through playwright-core, against a real
// `huddle serve` started by test-dashboard-progress.sh (env: HUDDLE_PORT,
// HUDDLE_SHOTS, CHROMIUM, AGENT_LOG). The team's leader, prog-coder, is a
// slow exec agent: each turn records its process group in
// $AGENT_LOG/prog-coder.pgid and runs for two minutes unless stopped. At
// each width (1440x900, 390x844): while a turn runs, the agent's card
// shows it working with the elapsed seconds, ticking; Cancel on the
// running conversation ends it cancelled on the page and in the REST API,
// kills the turn's process group and leaves the agent idle; the same for
// an exchange.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {setTimeout as sleep} from 'node:timers/promises';

import {PORT, SHOTS, api, dashboardPages} from './browser.mjs';

const PGIDS = path.join(process.env.AGENT_LOG || '', 'prog-coder.pgid');
// Bounds on waits so a broken page fails instead of hanging; never a
// measure of speed.
const LIVE = 20000;
const SLOW = 120000;
const AGENT = 'prog-coder';

assert.ok(PORT && SHOTS && process.env.AGENT_LOG, 'run me through test-dashboard-progress.sh');

// The turns the slow agent began so far (one process group each).
function turnsBegun() {
  try {
    return fs.readFileSync(PGIDS, 'utf8').split('\n').filter(Boolean);
  } catch (e) {
    return [];
  }
}

// 1 while any process is left in group pgid.
function groupAlive(pgid) {
  try {
    execFileSync('pgrep', ['-g', pgid], {stdio: 'ignore'});
    return true;
  } catch (e) {
    return false;
  }
}

async function until(what, fn, ms = LIVE) {
  const end = Date.now() + ms;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const consoleErrors = [];
const openLive = dashboardPages({team: 'prog', timeout: LIVE, onError: (text) => consoleErrors.push(text)});

// A new page at w x h on team prog, live, with the slow agent's card shown;
// mark is where its console errors begin.
async function openProg(w, h) {
  const mark = consoleErrors.length;
  const page = await openLive({width: w, height: h});
  const cardOf = page.locator(`#agents .agent[data-agent="${AGENT}"]`);
  await cardOf.waitFor({timeout: LIVE});
  return {page, mark, cardOf};
}

test('progress.js is served and builds no markup from strings', async () => {
  const r = await api('GET', '/assets/progress.js');
  assert.equal(r.status, 200);
  assert.doesNotMatch(r.text, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  const index = await api('GET', '/');
  assert.match(index.text, /<script src="\/assets\/progress\.js" defer><\/script>/);
});

test('cancel over REST: unknown and ended work is refused clearly', async () => {
  const none = await api('POST', '/api/conversations/nosuch/cancel');
  assert.equal(none.status, 404);
  assert.deepEqual(none.json, {error: 'conversation "nosuch" not found'});
  const idle = await api('POST', '/api/teams/prog/exchange/cancel');
  assert.equal(idle.status, 409);
  assert.deepEqual(idle.json, {error: "no exchange is running in team prog's room"});
  const ghost = await api('POST', '/api/teams/ghost/exchange/cancel');
  assert.equal(ghost.status, 404);
});

for (const [w, h] of [[1440, 900], [390, 844]]) {
  test(`${w}x${h}: a working agent shows its elapsed time; Cancel ends a running conversation`, {timeout: SLOW}, async () => {
    const {page, mark, cardOf} = await openProg(w, h);
    assert.equal(await cardOf.locator('.working-time').count(), 0, 'idle: no working indicator');

    const begun = turnsBegun().length;
    await page.locator('#ask-text').fill('take your time');
    await page.locator('#ask-text').press('Enter');
    const conv = page.locator('#conversations li.conv').first();
    await conv.waitFor({timeout: LIVE});
    const id = await conv.getAttribute('data-conversation');
    assert.match(id, /^[0-9a-f-]{36}$/);
    await until('the slow turn to begin', () => turnsBegun().length > begun);
    const pgid = turnsBegun().at(-1);

    // The indicator: working with seconds, and it ticks.
    const timer = cardOf.locator('.working-time');
    await timer.waitFor({timeout: LIVE});
    assert.equal(await cardOf.getAttribute('data-status'), 'working');
    const first = await timer.textContent();
    assert.match(first, /^working \d+s$/);
    await until('the elapsed time to tick', async () => (await timer.textContent()) !== first);
    assert.match(await timer.textContent(), /^working [1-9]\d*s$/);
    const cancel = conv.locator('button.conv-cancel');
    assert.equal(await cancel.textContent(), 'Cancel');
    await page.screenshot({path: path.join(SHOTS, `${w}-conversation-working.png`)});

    await cancel.click();
    await page.locator(`#conversations li.conv[data-conversation="${id}"][data-status="cancelled"]`)
      .waitFor({timeout: LIVE});
    assert.match(await conv.locator('.conv-status').textContent(), /^cancelled · 0 replies$/);
    assert.equal(await conv.locator('button.conv-cancel').count(), 0, 'no Cancel once it ended');
    const r = await api('GET', `/api/conversations/${id}`);
    assert.equal(r.status, 200);
    assert.equal(r.json.status, 'cancelled');
    assert.ok(r.json.completedAt > 0);
    await until('the turn\'s process group to be gone', () => !groupAlive(pgid));
    await until('the agent to be idle', async () => (await cardOf.getAttribute('data-status')) === 'idle');
    assert.equal(await cardOf.locator('.working-time').count(), 0, 'idle again: no indicator');
    assert.equal((await api('GET', `/api/agents/${AGENT}`)).json.agent.status, 'idle');
    const again = await api('POST', `/api/conversations/${id}/cancel`);
    assert.equal(again.status, 409);
    assert.deepEqual(again.json, {error: `conversation ${id} already ended (cancelled)`});
    await page.screenshot({path: path.join(SHOTS, `${w}-conversation-cancelled.png`)});
    assert.deepEqual(consoleErrors.slice(mark), [], 'no console errors');
    await page.close();
  });

  test(`${w}x${h}: Cancel ends a running exchange`, {timeout: SLOW}, async () => {
    const {page, mark, cardOf} = await openProg(w, h);
    assert.equal(await page.locator('#exchange-cancel').isVisible(), false, 'no Cancel before it runs');

    const begun = turnsBegun().length;
    await page.locator('#exchange-stimulus').fill('plan slowly');
    await page.locator('#exchange-stimulus').press('Enter');
    const cancel = page.locator('#exchange-cancel');
    await cancel.waitFor({state: 'visible', timeout: LIVE});
    await until('the slow turn to begin', () => turnsBegun().length > begun);
    const pgid = turnsBegun().at(-1);
    await cardOf.locator('.working-time').waitFor({timeout: LIVE});
    assert.match(await cardOf.locator('.working-time').textContent(), /^working \d+s$/);
    await page.screenshot({path: path.join(SHOTS, `${w}-exchange-working.png`)});

    await cancel.click();
    await page.locator('#exchange-result .end-reason', {hasText: 'cancelled'}).waitFor({timeout: LIVE});
    assert.match(await page.locator('#exchange-result').textContent(), /cancelled by the user/);
    await cancel.waitFor({state: 'hidden', timeout: LIVE});
    await until('the turn\'s process group to be gone', () => !groupAlive(pgid));
    await until('the agent to be idle', async () => (await cardOf.getAttribute('data-status')) === 'idle');
    const ev = await api('GET', '/api/events?team=prog&kind=turn_bound_hit&limit=1000');
    assert.equal(ev.status, 200);
    assert.equal(ev.json.events.at(-1).data.reason, 'cancelled');
    await page.screenshot({path: path.join(SHOTS, `${w}-exchange-cancelled.png`)});
    assert.deepEqual(consoleErrors.slice(mark), [], 'no console errors');
    await page.close();
  });
}
