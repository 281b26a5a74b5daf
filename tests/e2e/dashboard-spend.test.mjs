// dashboard-spend.test.mjs -- the Spend panel on the dashboard, in
// Debian's headless Chromium through playwright-core, against a real
// `huddle serve` started by test-dashboard-spend.sh (env: HUDDLE_PORT,
// HUDDLE_SHOTS, CHROMIUM). Team sp has spent $1.50: coder $1.20 in two
// turns, lead $0.30 in one, all this hour; a $5 cap on the team, a $1
// warn budget on coder (over). Checked: one series per agent whose bar
// heights are proportional to the spend GET /api/teams/sp/spend reports,
// the axis in USD, the accessible summary and table, the budget bars
// against their limits (coder's over, highlighted), the costliest turns
// in order; then the server runs a turn of lead (POST
// /api/team-chat/exchange) and the chart follows without a reload; at
// 390 px nothing scrolls sideways; team quiet shows the empty state.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import {PORT, SHOTS, DESKTOP, PHONE, api, dashboardPages} from './browser.mjs';

const LIVE = 30000; // a bound on waits, never a measure of speed
assert.ok(PORT && SHOTS, 'run me through test-dashboard-spend.sh');

const consoleErrors = [];
const open = dashboardPages({team: 'sp', timeout: LIVE, onError: (text) => consoleErrors.push(text)});

// each bar: its agent, micro-cents and height
const bars = (page) => page.locator('#spend-svg rect.spend-bar').evaluateAll((rs) => rs.map((r) => ({
  agent: r.dataset.agent, mc: Number(r.dataset.microcents), height: Number(r.getAttribute('height')),
})));

function proportional(got, spend) {
  // one series per agent with spend, each bar's height its share of the
  // tallest column's spend
  const agents = spend.agents.map((a) => a.agent);
  assert.deepEqual([...new Set(got.map((b) => b.agent))].sort(), agents);
  const max = Math.max(...spend.buckets.map((b) => b.microcents));
  const tallest = Math.max(...spend.buckets.map((b) => b.microcents));
  assert.equal(max, tallest);
  const unit = got[0].height / got[0].mc;
  for (const b of got) {
    const want = spend.buckets.reduce((s, k) => s + (k.agents[b.agent] || 0), 0);
    assert.equal(b.mc, want, `${b.agent}'s bar holds its spend`);
    assert.ok(Math.abs(b.height - b.mc * unit) < 0.01, `${b.agent}: height ${b.height} for ${b.mc}`);
  }
}

test('the chart, the budgets and the costliest turns (desktop)', async () => {
  const page = await open(DESKTOP);
  await page.locator('#spend-svg').waitFor({timeout: LIVE});
  const spend = (await api('GET', '/api/teams/sp/spend')).json;
  assert.equal(spend.total.microcents, 150000000);

  const got = await bars(page);
  assert.equal(got.length, 2, 'one bucket, two agents');
  proportional(got, spend);
  const by = Object.fromEntries(got.map((b) => [b.agent, b]));
  assert.equal(by.coder.mc, 120000000);
  assert.equal(by.lead.mc, 30000000);
  assert.ok(Math.abs(by.coder.height / by.lead.height - 4) < 1e-6, 'coder spent four times what lead did');

  // the y axis in USD, from $0 to the tallest column
  const ticks = await page.locator('#spend-svg .spend-tick').allTextContents();
  assert.ok(ticks.includes('$0') && ticks.includes('$1.50') && ticks.includes('$0.75'), ticks.join(' | '));
  // accessible: a summary and a table
  const label = await page.locator('#spend-svg').getAttribute('aria-label');
  assert.equal(await page.locator('#spend-svg').getAttribute('role'), 'img');
  assert.match(label, /: \$1\.50 in 3 turns; coder \$1\.20, lead \$0\.30\.$/);
  assert.deepEqual(await page.locator('#spend-table tbody tr td').allTextContents(), ['$1.50', '$1.20', '$0.30']);
  assert.equal(await page.locator('#spend-total').textContent(), '$1.50 in 3 turns');
  assert.equal(await page.locator('#spend-empty').isHidden(), true);

  // budgets against their limits
  const team = page.locator('#spend-budgets li[data-scope="team"]');
  assert.equal(await team.getAttribute('data-state'), 'ok');
  assert.equal(await team.locator('.budget-words').textContent(), '$1.50 of $5.00 (cap)');
  assert.equal(await team.locator('.budget-fill').evaluate((e) => e.style.width), '30%');
  assert.equal(await team.locator('.budget-bar').getAttribute('aria-valuemax'), '500000000');
  const coder = page.locator('#spend-budgets li[data-subject="coder"]');
  assert.equal(await coder.getAttribute('data-state'), 'over');
  assert.equal(await coder.locator('.budget-words').textContent(), '$1.20 of $1.00 (warn: over)');
  assert.equal(await coder.locator('.budget-fill').evaluate((e) => e.style.width), '100%');
  const over = await coder.locator('.budget-words').evaluate((e) => getComputedStyle(e).fontWeight);
  assert.equal(over, '600', 'an over budget stands out');
  const lead = page.locator('#spend-budgets li[data-subject="lead"]');
  assert.equal(await lead.locator('.budget-words').textContent(), '$0.30 spent, no limit');

  // the costliest turns, costliest first
  const turns = await page.locator('#spend-turns li').evaluateAll((ls) => ls.map((l) => ({
    mc: Number(l.dataset.microcents), agent: l.querySelector('.agent-ref').textContent,
    what: l.querySelector('.spend-what').textContent, amount: l.querySelector('.spend-amount').textContent,
  })));
  assert.deepEqual(turns.map((t) => [t.agent, t.amount, t.what]), [
    ['coder', '$0.60', 'exchange turn 1'], ['coder', '$0.60', 'exchange turn 1'], ['lead', '$0.30', 'exchange turn 1'],
  ]);
  await page.locator('#spend-panel').screenshot({path: path.join(SHOTS, 'spend-desktop.png')});

  // a new turn, run by the server: the chart follows live
  const r = await api('POST', '/api/team-chat/exchange',
    {teamId: 'sp', stimulus: 'once more', firstSpeakers: ['lead'], maxExchangeTurns: 1});
  assert.ok(r.status < 300, `exchange: ${r.status} ${r.text}`);
  await page.waitForFunction(
    () => document.querySelector('#spend-svg rect.spend-bar[data-agent="lead"]')?.dataset.microcents === '60000000',
    null, {timeout: LIVE});
  const after = (await api('GET', '/api/teams/sp/spend')).json;
  assert.equal(after.total.microcents, 180000000);
  const now = await bars(page);
  proportional(now, after);
  const by2 = Object.fromEntries(now.map((b) => [b.agent, b]));
  assert.ok(Math.abs(by2.coder.height / by2.lead.height - 2) < 1e-6, 'coder now twice lead');
  assert.equal(await page.locator('#spend-total').textContent(), '$1.80 in 4 turns');
  assert.equal(await page.locator('#spend-turns li').first().locator('.spend-amount').textContent(), '$0.60');
  assert.equal(await page.locator('#spend-turns li').nth(2).locator('.agent-ref').textContent(), 'lead');
  await page.locator('#spend-panel').screenshot({path: path.join(SHOTS, 'spend-live.png')});
  await page.close();
});

test('at 390 px nothing scrolls sideways', async () => {
  const page = await open(PHONE);
  await page.locator('#spend-svg').waitFor({timeout: LIVE});
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
  const panel = await page.locator('#spend-panel').boundingBox();
  const chart = await page.locator('#spend-svg').boundingBox();
  assert.ok(chart.x >= panel.x && chart.x + chart.width <= panel.x + panel.width + 0.5,
    `the chart (${chart.x}+${chart.width}) fits its panel (${panel.x}+${panel.width})`);
  for (const sel of ['#spend-budgets', '#spend-turns']) {
    const box = await page.locator(sel).boundingBox();
    assert.ok(box.x + box.width <= PHONE.width, `${sel} fits the screen`);
  }
  proportional(await bars(page), (await api('GET', '/api/teams/sp/spend')).json);
  await page.locator('#spend-panel').screenshot({path: path.join(SHOTS, 'spend-phone.png')});
  await page.close();
});

test('a team without spend says so', async () => {
  const page = await open(DESKTOP, 'quiet');
  await page.locator('#spend-empty').waitFor({timeout: LIVE});
  // the answer for quiet has been drawn: its total is empty
  await page.waitForFunction(() => document.querySelector('#spend-total').textContent === '', null, {timeout: LIVE});
  assert.equal(await page.locator('#spend-empty').textContent(), 'No spend in the last 24 hours.');
  assert.equal(await page.locator('#spend-chart').isHidden(), true);
  assert.equal(await page.locator('#spend-turns li').count(), 0);
  // a longer window: the same, said for it
  await page.locator('#spend-since').selectOption('7d');
  await page.waitForFunction(
    () => document.querySelector('#spend-empty').textContent === 'No spend in the last 7 days.', null, {timeout: LIVE});
  await page.locator('#spend-panel').screenshot({path: path.join(SHOTS, 'spend-empty.png')});
  assert.deepEqual(consoleErrors, []);
  await page.close();
});
