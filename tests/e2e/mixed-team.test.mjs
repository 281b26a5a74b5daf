// mixed-team.test.mjs -- the dashboard of the team test-mixed-team.sh
// ran (a native leader, a Claude Code coder, a Codex reviewer and an
// OpenClaw scribe, each after real turns), in Debian's headless Chromium
// through playwright-core against the `huddle serve` that script started
// (env HUDDLE_PORT, HUDDLE_SHOTS, CHROMIUM, MIXED_TEAM: the team,
// MIXED_RUNTIMES: its agents' runtimes, "id:runtime ..."). The REST API
// is the truth: each agent's card shows its runtime by name and what it
// has spent, the native and OpenClaw agents like the CLI runtimes; the
// board shows the tasks the exchange left, each with its owner.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import {BASE, PORT, SHOTS, api, onConsoleError, openBrowser} from './browser.mjs';

const TEAM = process.env.MIXED_TEAM;
const RUNTIMES = Object.fromEntries((process.env.MIXED_RUNTIMES || '').split(' ').filter(Boolean)
  .map((p) => p.split(':')));
const LIVE = 20000; // a bound on waits, never a measure of speed
assert.ok(PORT && SHOTS && TEAM && Object.keys(RUNTIMES).length, 'run me through test-mixed-team.sh');

let page;
let closeBrowser;
const consoleErrors = [];

before(async () => {
  ({page, close: closeBrowser} = await openBrowser());
  onConsoleError(page, (text) => consoleErrors.push(text));
  await page.goto(`${BASE}/teams/${TEAM}`);
  await page.locator('#conn[data-state="live"]').waitFor({timeout: LIVE});
});
after(() => closeBrowser?.());

test('each agent card shows its runtime and its spend', async () => {
  const agents = (await api('GET', `/api/teams/${TEAM}/agents`)).json.agents;
  assert.deepEqual(Object.fromEntries(agents.map((a) => [a.id, a.runtime])), RUNTIMES,
    'the API lists the team the script made');
  for (const a of agents) {
    const card = page.locator(`#agents .agent[data-agent="${a.id}"]`);
    await card.waitFor({timeout: LIVE});
    const badge = card.locator('.badge.runtime');
    assert.equal(await badge.textContent(), a.runtime, `${a.id}: the runtime's name`);
    assert.equal(await badge.getAttribute('title'), `runtime: ${a.runtime}`, `${a.id}: the badge's title`);
    assert.equal(await badge.evaluate((e) => e.classList.contains('scripted')), false,
      `${a.id}: not labelled scripted`);
    assert.ok(a.spent_usd > 0, `${a.id} has spent something (its turns' cost)`);
    const spent = card.locator('.spent');
    const R = (usd, f) => page.evaluate(([u, fn]) => window.huddleRender[fn](u), [usd, f]);
    assert.equal(await spent.textContent(), await R(a.spent_usd, 'moneyText'), `${a.id}: its spend`);
    assert.equal(await spent.getAttribute('title'), `${await R(a.spent_usd, 'moneyExact')} spent so far`,
      `${a.id}: its exact spend`);
  }
  await page.locator('#agents').screenshot({path: path.join(SHOTS, 'mixed-agents.png')});
});

test('the board shows the tasks the runtimes worked', async () => {
  const tasks = (await api('GET', `/api/teams/${TEAM}/tasks`)).json;
  const list = Array.isArray(tasks) ? tasks : tasks.tasks;
  assert.ok(list.length >= 2, 'the exchange left tasks');
  for (const t of list) {
    const card = page.locator(`#board .card[data-task-id="${t.id}"]`);
    await card.waitFor({timeout: LIVE});
    assert.match(await card.textContent(), new RegExp(t.owner), `task ${t.id} names its owner`);
  }
  await page.screenshot({path: path.join(SHOTS, 'mixed-team.png')});
  assert.deepEqual(consoleErrors, []);
});
