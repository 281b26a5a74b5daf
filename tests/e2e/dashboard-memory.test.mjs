// dashboard-memory.test.mjs -- the Memory panel (web/memory.js) in
// Debian's headless Chromium through playwright-core, against the real
// `huddle serve` test-dashboard-memory.sh started (env: HUDDLE_PORT,
// HUDDLE_SHOTS, CHROMIUM) on a home with two teams' facts. The page acts
// as the user: it lists and searches the team's facts and the global ones,
// never an agent's private ones nor another team's; a fact's text is text,
// never markup; a secret-shaped save is refused with the server's reason
// and what was typed kept. Checked against the REST API (the truth), at a
// desktop width and at a phone's.
import {test, after} from 'node:test';
import assert from 'node:assert/strict';

import {BASE, DESKTOP, PHONE, PORT, SHOTS, api, numberedShots, onConsoleError, openBrowser} from './browser.mjs';

// A bound on waits so a broken page fails instead of hanging; never a
// measure of speed.
const LIVE = 15000;

assert.ok(PORT && SHOTS, 'run me through test-dashboard-memory.sh');

let page;
let closeBrowser;
let errors = [];
const shot = numberedShots(() => page);

async function open(viewport) {
  await closeBrowser?.();
  ({page, close: closeBrowser} = await openBrowser(viewport));
  errors = [];
  onConsoleError(page, (text, url) => errors.push({text, url}));
  await page.goto(BASE + '/teams/dev');
  await page.locator('#memory-panel').waitFor({state: 'visible', timeout: LIVE});
}

after(() => closeBrowser?.());

// The ids the panel shows, in order, once they are `want`.
async function shown(want) {
  const ids = () => page.locator('#memory-list .fact').evaluateAll(
    (els) => els.map((e) => Number(e.dataset.factId)));
  for (let i = 0; i < LIVE / 100; i++) {
    if (JSON.stringify(await ids()) === JSON.stringify(want)) return;
    await page.waitForTimeout(100);
  }
  assert.deepEqual(await ids(), want);
}

test('memory.js is served and never builds markup from strings', async () => {
  const r = await api('GET', '/assets/memory.js');
  assert.equal(r.status, 200);
  assert.doesNotMatch(r.text, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  assert.equal((await api('GET', '/assets/memory.css')).status, 200);
});

for (const [name, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
  test(`${name}: the panel lists what the user may read, newest first`, async () => {
    await open(viewport);
    const truth = await api('GET', '/api/teams/dev/memory?limit=20');
    assert.deepEqual(truth.json.facts.map((f) => f.id), [5, 4, 1]);
    await shown([5, 4, 1]); // not coder's private 2, not ops's team fact 3
    // text stays text: the tags in fact 5 are shown, not run
    const five = page.locator('#memory-list .fact[data-fact-id="5"] .fact-text');
    assert.equal(await five.textContent(), 'the demo <b>box</b> is <script>x()</script> blue');
    assert.equal(await page.locator('#memory-list script, #memory-list b').count(), 0);
    assert.equal(await page.locator('#memory-list .fact[data-fact-id="1"] .fact-tag').textContent(), 'db');
    assert.equal(await page.locator('#memory-list .fact[data-fact-id="4"]').getAttribute('data-scope'), 'global');
    await page.locator('#memory-panel').scrollIntoViewIfNeeded();
    await shot(`${name}-list`);
    assert.deepEqual(errors, []);
  });

  test(`${name}: the search box searches, best first, with FTS syntax as words`, async () => {
    await page.fill('#memory-q', 'staging DB');
    const truth = await api('GET', '/api/teams/dev/memory/search?q=staging%20DB&limit=20');
    const ids = truth.json.facts.map((f) => f.id);
    assert.deepEqual([...ids].sort(), [1, 4]);
    await shown(ids);
    await shot(`${name}-search`);
    const syntax = '"staging" AND (port* OR NEAR';
    const plain = await api('GET', `/api/teams/dev/memory/search?q=${encodeURIComponent(syntax)}&limit=20`);
    assert.equal(plain.status, 200);
    assert.equal(plain.json.facts[0].id, 1); // staging and port
    await page.fill('#memory-q', syntax);
    await shown(plain.json.facts.map((f) => f.id));
    await page.fill('#memory-q', 'stash');
    await page.locator('#memory-empty', {hasText: 'No fact matches'}).waitFor({timeout: LIVE});
    await shown([]); // coder's private fact is coder's alone
    await page.fill('#memory-q', '');
    await shown([5, 4, 1]);
    assert.deepEqual(errors, []);
  });
}

test('saving: a fact appears; a secret is refused, named, and kept in the box', async () => {
  await open(DESKTOP);
  await shown([5, 4, 1]);
  const key = 'deploy with ghp_Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78';
  await page.fill('#memory-text', key);
  await page.locator('#memory-form button[type="submit"]').click();
  const refused = await api('POST', '/api/teams/dev/memory', {text: key});
  assert.equal(refused.status, 422);
  await page.locator('#memory-save-msg', {hasText: refused.json.error}).waitFor({timeout: LIVE});
  assert.match(refused.json.error, /GitHub token \(ghp_\.\.\.\)/);
  assert.doesNotMatch(await page.locator('#memory-save-msg').textContent(), /Ab12Cd34/);
  assert.equal(await page.inputValue('#memory-text'), key); // nothing lost
  await shot('refused');
  assert.equal(errors.length, 1, JSON.stringify(errors)); // the browser logs the 422
  assert.match(errors[0].text, /status of 422/);
  await page.fill('#memory-text', 'the release train leaves on Thursdays');
  await page.selectOption('#memory-scope', 'global');
  await page.locator('#memory-form button[type="submit"]').click();
  await page.locator('#memory-save-msg', {hasText: 'Saved fact #6.'}).waitFor({timeout: LIVE});
  await shown([6, 5, 4, 1]);
  const six = await api('GET', '/api/teams/ops/memory/search?q=Thursdays');
  assert.deepEqual(six.json.facts.map((f) => [f.id, f.scope, f.team, f.source.agent]),
    [[6, 'global', 'dev', 'user']]);
  assert.equal(await page.inputValue('#memory-text'), '');
  await shot('saved');
});

test('another team shows its own facts and the global ones', async () => {
  await page.selectOption('#team-select', 'ops');
  await shown([6, 4, 3]);
  const truth = await api('GET', '/api/teams/ops/memory?limit=20');
  assert.deepEqual(truth.json.facts.map((f) => f.id), [6, 4, 3]);
  await shot('ops');
});
