// dashboard-words.test.mjs -- what the dashboard says, in Debian's headless
// Chromium through playwright-core, against a real `huddle serve` started
// by test-dashboard-words.sh (env: HUDDLE, HUDDLE_SRC, HUDDLE_HOME,
// HUDDLE_PORT, HUDDLE_SHOTS, CHROMIUM). The teams (words, quiet) have no description;
// their scripted agents' canned replies carry Markdown, hostile HTML and a
// text long enough to cost more than a cent. Every test runs at both
// widths, 1440x900 then 390x844, on one page, in order.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {DESKTOP, PHONE, PORT, SHOTS, api, gotoLive, onConsoleError, openBrowser} from './browser.mjs';

const HUDDLE = process.env.HUDDLE;
const HUDDLE_SRC = process.env.HUDDLE_SRC;
// Bounds on waits so a broken page fails instead of hanging; never a
// measure of speed.
const LIVE = 10000;
const SLOW = 60000;

assert.ok(HUDDLE && HUDDLE_SRC && PORT && SHOTS, 'run me through test-dashboard-words.sh');

// Every event kind the server emits, read from its sources: each
// hd_events_append(st, "kind", ...) and the exchange's event_raw(st,
// "kind", ...). A kind added there without a sentence fails below.
function emittedKinds() {
  const kinds = new Set();
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, {withFileTypes: true})) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.c')) {
        const src = fs.readFileSync(p, 'utf8');
        for (const m of src.matchAll(/(?:hd_events_append(?:_raw)?|event_raw)\(\s*[\w>.-]+,\s*"([a-z_]+)"/g)) kinds.add(m[1]);
      }
    }
  };
  walk(path.join(HUDDLE_SRC, 'src'));
  return [...kinds].sort();
}

function cli(...args) {
  return execFileSync(HUDDLE, args, {encoding: 'utf8'});
}

let page;
let closeBrowser;
const consoleErrors = [];

async function shot(name) {
  await page.screenshot({path: path.join(SHOTS, `${name}.png`), fullPage: true});
}

before(async () => {
  ({page, close: closeBrowser} = await openBrowser());
  onConsoleError(page, (text) => consoleErrors.push(text));
});

after(() => closeBrowser?.());

const open = (team) => gotoLive(page, team, LIVE);

// Ask through the page's form; the conversation's element once answered.
async function ask(question) {
  await page.locator('#ask-text').fill(question);
  await page.locator('#ask-text').press('Enter');
  const conv = page.locator('#conversations .conv', {has: page.locator('.conv-q', {hasText: question})});
  await conv.waitFor({timeout: LIVE});
  await page.locator('#conversations .conv[data-status="completed"]',
    {has: page.locator('.conv-q', {hasText: question})}).waitFor({timeout: SLOW});
  return conv;
}

// The page's visible text has no "null" and no "undefined".
async function noNullOnScreen(what) {
  const text = await page.evaluate(() => document.body.innerText);
  assert.doesNotMatch(text, /\bnull\b/i, `${what}: "null" on screen:\n${text}`);
  assert.doesNotMatch(text, /\bundefined\b/i, `${what}: "undefined" on screen:\n${text}`);
}

for (const [label, viewport] of [['wide', DESKTOP], ['narrow', PHONE]]) {
  test(`${label}: a reply's Markdown is rendered, its mention a chip, the answer shown once`, {timeout: SLOW}, async () => {
    await page.setViewportSize(viewport);
    const mark = consoleErrors.length;
    await open('words');
    const question = `markdown please (${label})`;
    const conv = await ask(question);
    const lead = conv.locator('.reply[data-agent="lead"] .body');
    await lead.waitFor({timeout: LIVE});
    // Markdown as elements
    assert.equal(await lead.locator('h2').textContent(), 'Plan');
    assert.deepEqual(await lead.locator('ul > li').allTextContents(), ['first step', 'second step']);
    assert.equal(await lead.locator('li strong').textContent(), 'step');
    assert.equal(await lead.locator('p > code').textContent(), 'make build');
    assert.equal(await lead.locator('pre > code').textContent(), 'make build && ctest\n');
    const link = lead.locator('a', {hasText: 'the docs'});
    assert.equal(await link.getAttribute('href'), 'https://example.com/docs');
    assert.equal(await link.getAttribute('target'), '_blank');
    assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
    // a javascript: link keeps its text and loses its address
    const bad = lead.locator('a', {hasText: 'this'});
    assert.equal(await bad.count(), 1);
    assert.equal(await bad.getAttribute('href'), null);
    // [@coder: ...] is a chip naming the agent, its text after it
    const chip = lead.locator('.chip.chip-mention');
    assert.equal(await chip.count(), 1);
    assert.equal(await chip.getAttribute('data-to'), 'coder');
    assert.equal(await chip.locator('.chip-to').textContent(), '→ @coder');
    assert.equal(await chip.locator('.chip-body').textContent(), 'please review the plan');
    assert.doesNotMatch(await lead.textContent(), /\[@coder/);
    // the coder's reply, rendered too
    const coder = conv.locator('.reply[data-agent="coder"] .body');
    await coder.waitFor({timeout: LIVE});
    assert.equal(await coder.locator('em').textContent(), 'good');
    // shown once: every reply's text appears once in the conversation,
    // and no second copy of the aggregate follows the replies
    const convText = await conv.innerText();
    for (const s of ['first step', 'please review the plan', 'Reviewed: looks']) {
      assert.equal(convText.split(s).length - 1, 1, `[${s}] once in:\n${convText}`);
    }
    assert.equal(await conv.locator('.answer, .answer-body').count(), 0);
    assert.match(await conv.locator('.conv-status').textContent(), /^answered · 2 replies$/);
    assert.deepEqual(consoleErrors.slice(mark), []);
    await shot(`${label}-markdown`);
  });

  test(`${label}: raw HTML in a reply is shown as text and never runs`, {timeout: SLOW}, async () => {
    const mark = consoleErrors.length;
    const conv = await ask(`hostile (${label})`);
    const body = conv.locator('.reply[data-agent="lead"] .body');
    await body.waitFor({timeout: LIVE});
    const text = await body.textContent();
    assert.ok(text.includes('<script>window.__pwned = 1</script>'), text);
    assert.ok(text.includes('<img src=x onerror="window.__pwned = 2">'), text);
    assert.ok(text.includes('<b>bold?</b>'), text);
    assert.equal(await page.locator('#conversations script, #conversations img, #conversations b').count(), 0);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.deepEqual(consoleErrors.slice(mark), []);
  });

  test(`${label}: costs in cents, the exact value on hover`, {timeout: SLOW}, async () => {
    const mark = consoleErrors.length;
    // one reply from spender costs over a cent (its 3,900 characters)
    await ask(`@spender go (${label})`);
    const agents = (await api('GET', '/api/teams/words/agents')).json.agents;
    const spent = agents.find((a) => a.id === 'spender').spent_usd;
    assert.ok(spent >= 0.01, `spender spent ${spent}`);
    const money = page.locator('#agents .agent[data-agent="spender"] .spent');
    await page.waitForFunction((want) => {
      const e = document.querySelector('#agents .agent[data-agent="spender"] .spent');
      return e && e.textContent === want;
    }, '$' + spent.toFixed(2), {timeout: LIVE});
    const title = await money.getAttribute('title');
    const exact = Number(/^\$([0-9.]+) spent so far/.exec(title)[1]);
    assert.ok(Math.abs(exact - spent) < 1e-9, `title ${title} for ${spent}`);
    assert.notEqual(title.split(' ')[0], '$' + spent.toFixed(2), 'the title is not rounded');
    // below a cent: "< $0.01" (by the first run the coder has answered
    // one short message: a fraction of a cent)
    const coderSpent = agents.find((a) => a.id === 'coder').spent_usd;
    assert.ok(coderSpent > 0, 'the coder has answered');
    if (label === 'wide') assert.ok(coderSpent < 0.005, `coder spent ${coderSpent}`);
    const coderMoney = page.locator('#agents .agent[data-agent="coder"] .spent');
    assert.equal(await coderMoney.textContent(), coderSpent < 0.005 ? '< $0.01' : '$' + coderSpent.toFixed(2));
    assert.match(await coderMoney.getAttribute('title'), /^\$0\.\d+ spent so far \(estimated: scripted\)$/);
    // the events log's cost sentence, rounded the same way
    const row = page.locator('#events tbody tr[data-kind="cost"]', {hasText: 'spender'}).first();
    await row.waitFor({timeout: LIVE});
    const m = row.locator('.ev-sentence .money');
    assert.match(await m.textContent(), /^(\$\d+\.\d\d|< \$0\.01)$/);
    assert.match(await m.getAttribute('title'), /^\$\d+(\.\d+)?$/);
    assert.deepEqual(consoleErrors.slice(mark), []);
  });

  test(`${label}: an exchange nobody owes a turn in says so and points to Ask the team`, {timeout: SLOW}, async () => {
    const mark = consoleErrors.length;
    const stimulus = `Anyone? (${label})`;
    await page.locator('#exchange-stimulus').fill(stimulus);
    await page.locator('#exchange-turns').fill('5');
    await page.locator('#exchange-turns').press('Enter');
    await page.locator('#exchange-result .end-reason').waitFor({timeout: SLOW});
    assert.equal(await page.locator('#exchange-result .end-reason').textContent(), 'no_pending_obligation');
    const end = await page.locator('#exchange-result').innerText();
    assert.match(end, /^Ended after \d turns?( of at most 5)?: nobody owes a turn on the board \(no_pending_obligation\)\. /);
    assert.match(end, /An exchange follows the board, not @mentions\. To have the team answer a question, ask the team\./);
    await page.locator('#exchange-result button', {hasText: 'ask the team'}).click();
    assert.equal(await page.evaluate(() => document.activeElement.id), 'ask-text');
    assert.equal(await page.locator('#ask-text').inputValue(), stimulus);
    await page.locator('#ask-text').fill('');
    const row = page.locator('#events tbody tr[data-kind="turn_bound_hit"]').first();
    await row.waitFor({timeout: LIVE});
    assert.match(await row.locator('.ev-sentence').textContent(),
      /^the exchange in words ended after \d turns?: nobody owes a turn on the board — ask the team instead$/);
    assert.deepEqual(consoleErrors.slice(mark), []);
  });

  test(`${label}: the events log speaks in sentences, the JSON behind a toggle`, {timeout: SLOW}, async () => {
    const mark = consoleErrors.length;
    const subject = `Fix login (${label})`;
    const id = JSON.parse(cli('--json', 'task', 'create', 'words', subject)).id;
    cli('task', 'claim', String(id), '--as', 'coder');
    const row = page.locator(`#events tbody tr[data-kind="task_claimed"]`, {hasText: `#${id}`}).first();
    await row.waitFor({timeout: LIVE});
    await page.waitForFunction((want) => [...document.querySelectorAll('#events tr[data-kind="task_claimed"] .ev-sentence')]
      .some((e) => e.textContent === want), `coder claimed #${id} “${subject}”`, {timeout: LIVE});
    const created = page.locator('#events tbody tr[data-kind="task_created"]', {hasText: `#${id}`}).first();
    assert.equal(await created.locator('.ev-sentence').textContent(), `you created #${id} “${subject}”`);
    // a kind the page once did not listen for arrives live too
    cli('budget', 'set', 'words', '--agent', 'coder', '--limit-cents', '250', '--mode', 'warn');
    const budget = page.locator('#events tbody tr[data-kind="budget_set"]').first();
    await budget.waitFor({timeout: LIVE});
    assert.match(await budget.locator('.ev-sentence').textContent(),
      /^a warn budget of \$2\.50 was set for agent coder$/);
    // the mailbox's idle notice, in words (an agent goes idle after a turn)
    const idle = page.locator('#events tbody tr[data-kind="message_sent"]', {hasText: 'idle notice'}).first();
    assert.match(await idle.locator('.ev-sentence').textContent(), /^(coder|spender) sent an idle notice to lead: “\1 is idle”$/);
    const done = page.locator('#events tbody tr[data-kind="conversation_completed"]').first();
    assert.match(await done.locator('.ev-sentence').textContent(), /^the team answered with \d+ repl(y|ies)$/);
    // every row is a sentence, none "null"; its JSON is closed until asked
    const sentences = await page.locator('#events tbody .ev-sentence').allTextContents();
    assert.ok(sentences.length >= 10, `${sentences.length} rows`);
    for (const s of sentences) {
      assert.ok(s.trim().length > 0);
      assert.doesNotMatch(s, /\bnull\b|\bundefined\b|\[object/, s);
    }
    const details = row.locator('details.ev-json');
    assert.equal(await details.evaluate((d) => d.open), false);
    assert.equal(await row.locator('pre').isVisible(), false);
    await details.locator('summary').click();
    assert.equal(await details.evaluate((d) => d.open), true);
    const json = JSON.parse(await row.locator('pre').textContent());
    assert.equal(json.kind, 'task_claimed');
    assert.equal(json.task_id, id);
    assert.equal(String(json.seq), await row.getAttribute('data-seq'));
    assert.equal(json.data.owner, 'coder');
    await details.locator('summary').click();
    assert.equal(await details.evaluate((d) => d.open), false);
    // a team without a description: nothing in its place, no "null"
    assert.equal(await page.locator('#team-meta .team-desc').count(), 0);
    await noNullOnScreen('words');
    await page.locator('#events-panel').scrollIntoViewIfNeeded();
    await shot(`${label}-events`);
    assert.deepEqual(consoleErrors.slice(mark), []);
  });

  test(`${label}: every kind the server emits has its own sentence, never null`, async () => {
    const kinds = emittedKinds();
    assert.ok(kinds.length >= 40 && kinds.includes('task_claimed') && kinds.includes('turn_bound_hit'),
      kinds.join());
    const said = await page.evaluate((list) => {
      const ctx = {
        agent: (x) => document.createTextNode(String(x)),
        task: (id, s) => document.createTextNode(`#${id}` + (s ? ` “${s}”` : '')),
        money: (usd) => window.huddleRender.money(usd),
      };
      const text = (ev) => {
        const span = document.createElement('span');
        span.append(...window.huddleRender.eventSentence(ev, ctx));
        return span.textContent;
      };
      const out = [];
      for (const kind of list) {
        // the fields absent, null, or all there but the agent and task
        for (const ev of [{kind, seq: 1, data: {}}, {kind, seq: 2, data: null},
          {kind, seq: 3, agent_id: 'coder', task_id: 7, data: {}}]) out.push([kind, text(ev)]);
      }
      return out;
    }, [...kinds, 'brand_new_kind']);
    for (const [kind, s] of said) {
      assert.ok(s.trim().length > 0, kind);
      assert.doesNotMatch(s, /\bnull\b|\bundefined\b|\bNaN\b|\[object/, `${kind}: ${s}`);
      // its own sentence, not the fallback (its name in words)
      if (kind !== 'brand_new_kind') assert.notEqual(s, kind.replace(/_/g, ' '), `${kind} has no sentence`);
    }
    assert.ok(said.some(([k, s]) => k === 'brand_new_kind' && s === 'brand new kind (coder) on #7'),
      'an unknown kind still reads as words');
  });

  test(`${label}: a conversation waiting for an agent says who, and nothing says null`, {timeout: SLOW}, async () => {
    const mark = consoleErrors.length;
    await open('quiet');
    assert.equal(await page.locator('#team-meta .team-desc').count(), 0);
    const question = `are you awake? (${label})`;
    const r = await api('POST', '/api/teams/quiet/chat', {message: question});
    assert.ok(r.status === 200 || r.status === 202, JSON.stringify(r.json));
    const conv = page.locator('#conversations .conv', {has: page.locator('.conv-q', {hasText: question})});
    await conv.waitFor({timeout: LIVE});
    await page.waitForFunction(() => {
      const e = document.querySelector('#conversations .conv .conv-status');
      return e && e.textContent === 'waiting for sleepy';
    }, null, {timeout: LIVE});
    const snap = (await api('GET', `/api/conversations/${await conv.getAttribute('data-conversation')}`)).json;
    assert.equal(snap.status, 'running');
    assert.deepEqual(snap.waitingFor, ['sleepy']);
    assert.equal(snap.message, question);
    await noNullOnScreen('quiet');
    await shot(`${label}-waiting`);
    assert.deepEqual(consoleErrors.slice(mark), []);
  });
}
