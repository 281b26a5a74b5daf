// dashboard-routines.test.mjs -- the routines list on the dashboard, in
// Debian's headless Chromium through playwright-core, against a real
// `huddle serve` started by test-dashboard-routines.sh (env: HUDDLE_PORT,
// HUDDLE_SHOTS, CHROMIUM, HUDDLE_CLOCK_FILE: the routines' clock, which
// this test moves). At 1440x900 and 390x844: each routine is listed with
// its agent, schedule and task; the next fire time is the instant the
// server schedules (09:00 Berlin on a weekday is 08:00 UTC in January;
// two hours after the clock's now for the interval); the disabled one
// says so. Then the clock passes the standup's time: the server fires it
// and the list shows the task it made and the next weekday's time,
// without a reload.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import {PORT, SHOTS, DESKTOP, PHONE, api, dashboardPages} from './browser.mjs';

const CLOCK = process.env.HUDDLE_CLOCK_FILE;
const LIVE = 20000; // a bound on waits, never a measure of speed
assert.ok(PORT && SHOTS && CLOCK, 'run me through test-dashboard-routines.sh');

const iso = (s) => new Date(s).toISOString();
const consoleErrors = [];
const openLive = dashboardPages({team: 'rtd', timeout: LIVE, onError: (text) => consoleErrors.push(text)});

async function open(size) {
  const page = await openLive(size);
  await page.locator('#routines tr[data-routine="standup"]').waitFor({timeout: LIVE});
  return page;
}

const cell = (page, name, cls) => page.locator(`#routines tr[data-routine="${name}"] td.${cls}`);

for (const [label, size] of [['desktop', DESKTOP], ['phone', PHONE]]) {
  test(`the routines list with next fire times (${label})`, async () => {
    const page = await open(size);
    const names = await page.locator('#routines tbody tr th').allTextContents();
    assert.deepEqual(names, ['paused', 'standup', 'sweep']);
    assert.equal(await cell(page, 'standup', 'routine-agent').textContent(), 'coder');
    assert.equal(await cell(page, 'standup', 'routine-schedule').textContent(),
      '0 9 * * mon-fri Europe/Berlin');
    assert.equal(await cell(page, 'standup', 'routine-task').textContent(), 'Post the standup notes');
    assert.equal(await cell(page, 'standup', 'routine-next').locator('time').getAttribute('datetime'),
      iso('2026-01-16T08:00:00Z'));
    assert.equal(await cell(page, 'sweep', 'routine-schedule').textContent(), 'every 2h');
    assert.equal(await cell(page, 'sweep', 'routine-next').locator('time').getAttribute('datetime'),
      iso('2026-01-15T12:00:00Z'));
    assert.equal(await cell(page, 'paused', 'routine-next').textContent(), 'disabled');
    assert.equal(await page.locator('#routines-empty').isHidden(), true);
    // the panel shows its rows: as tall as its table, not squeezed to its
    // heading by the column around it
    const panel = await page.locator('#routines-panel').boundingBox();
    const table = await page.locator('#routines').boundingBox();
    assert.ok(panel.height >= table.height, `the panel is ${panel.height}px, its table ${table.height}px`);
    // the table fits its panel (it may scroll inside it, never the page)
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
    await page.locator('#routines-panel').screenshot({path: path.join(SHOTS, `routines-${label}.png`)});
    await page.close();
  });
}

test('a fire the server makes shows in the list', async () => {
  const page = await open(DESKTOP);
  // Friday 2026-01-16 08:00:30 UTC: the standup is due (so is the sweep)
  fs.writeFileSync(CLOCK, String(Date.parse('2026-01-16T08:00:30Z')));
  const next = cell(page, 'standup', 'routine-next').locator('time');
  await page.waitForFunction(
    () => document.querySelector('#routines tr[data-routine="standup"] td.routine-next time')
      ?.getAttribute('datetime') === '2026-01-19T08:00:00.000Z',
    null, {timeout: LIVE});
  assert.equal(await next.getAttribute('datetime'), iso('2026-01-19T08:00:00Z'));
  const r = (await api('GET', '/api/teams/rtd/routines/standup')).json;
  assert.ok(r.routine.last_task_id > 0, 'the server fired it');
  assert.equal(await cell(page, 'standup', 'routine-last').textContent(), `task #${r.routine.last_task_id}`);
  // and the task is on the board, for coder
  const task = (await api('GET', `/api/tasks/${r.routine.last_task_id}`)).json;
  assert.equal((task.task || task).owner, 'coder');
  // the fire is in the event log, in words
  await page.locator('#events tbody tr', {hasText: 'routine standup made'}).first().waitFor({timeout: LIVE});
  await page.locator('#routines-panel').screenshot({path: path.join(SHOTS, 'routines-fired.png')});
  assert.deepEqual(consoleErrors, []);
  await page.close();
});
