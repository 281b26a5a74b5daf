// dashboard.test.mjs -- the dashboard (SPEC 12) in Debian's headless
// Chromium through playwright-core, against a real `huddle serve` started
// by test-dashboard.sh (env: HUDDLE, HUDDLE_HOME, HUDDLE_PORT,
// HUDDLE_SERVER_PID_FILE, HUDDLE_SERVE_LOG, HUDDLE_SHOTS, CHROMIUM).
// Other processes act on the team the way they would in real use -- the
// CLI posts and creates tasks, an agent claims over MCP -- and the page
// must show it live. The tests run in order and share one page.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync, spawn} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {setTimeout as sleep} from 'node:timers/promises';

import {BASE, PORT, SHOTS, api, numberedShots, onConsoleError, openBrowser} from './browser.mjs';

const HUDDLE = process.env.HUDDLE;
const PIDFILE = process.env.HUDDLE_SERVER_PID_FILE;
const SERVE_LOG = process.env.HUDDLE_SERVE_LOG;
// Bounds on waits so a broken page fails instead of hanging; never a
// measure of speed (except the room's 1 s, which is the stated behaviour).
const LIVE = 10000;
const SLOW = 60000;

assert.ok(HUDDLE && PORT && SHOTS && PIDFILE, 'run me through test-dashboard.sh');

function cli(...args) {
  return execFileSync(HUDDLE, args, {encoding: 'utf8'});
}

// The conversation and exchange engines are built on other branches: their
// tests run once the routes exist (any answer but the router's own 404).
async function routeExists(p) {
  const r = await api('POST', p, {});
  return !(r.status === 404 && r.json && r.json.error === 'no such route');
}
const hasConversations = await routeExists('/api/teams/dev/chat');
const hasExchanges = await routeExists('/api/team-chat/exchange');

let ctx;
let page;
let closeBrowser;
const consoleErrors = [];
const shot = numberedShots(() => page);

// Console errors since mark, less those the test expects.
function errorsSince(mark, allowed) {
  return consoleErrors.slice(mark).filter((e) => !(allowed && allowed.test(e)));
}

const room = (text) => page.locator('#room-log .post', {hasText: text});
const card = (status, id) => page.locator(`#col-${status} .card[data-task-id="${id}"]`);

before(async () => {
  ({ctx, page, close: closeBrowser} = await openBrowser());
  onConsoleError(page, (text) => consoleErrors.push(text));
});

after(() => closeBrowser?.());

test('the page, its script and style are served with their types and cache headers', async () => {
  const page0 = await api('GET', '/');
  assert.equal(page0.status, 200);
  assert.equal(page0.headers.get('content-type'), 'text/html; charset=utf-8');
  assert.equal(page0.headers.get('cache-control'), 'no-cache');
  assert.equal(page0.headers.get('x-content-type-options'), 'nosniff');
  assert.match(page0.headers.get('content-security-policy'), /script-src 'self'/);
  const etag = page0.headers.get('etag');
  assert.match(etag, /^"[0-9a-f]{20}"$/);
  assert.match(page0.text, /^<!doctype html>/);
  assert.match(page0.text, /<script src="\/assets\/app\.js" defer><\/script>/);

  // Revalidation: the same ETag back is a 304 with no body.
  const again = await fetch(BASE + '/', {headers: {'If-None-Match': etag}});
  assert.equal(again.status, 304);
  assert.equal(await again.text(), '');
  assert.equal(again.headers.get('etag'), etag);
  const stale = await fetch(BASE + '/', {headers: {'If-None-Match': '"0000"'}});
  assert.equal(stale.status, 200);

  const types = {
    '/assets/app.js': 'text/javascript; charset=utf-8',
    '/assets/app.css': 'text/css; charset=utf-8',
    '/assets/favicon.svg': 'image/svg+xml',
  };
  for (const [p, type] of Object.entries(types)) {
    const r = await api('GET', p);
    assert.equal(r.status, 200, p);
    assert.equal(r.headers.get('content-type'), type, p);
    assert.equal(r.headers.get('cache-control'), 'no-cache', p);
    assert.match(r.headers.get('etag'), /^"[0-9a-f]{20}"$/, p);
    assert.notEqual(r.headers.get('etag'), etag, `${p} has its own ETag`);
    assert.equal(r.headers.get('content-security-policy'), null, p);
  }
  const js = await api('GET', '/assets/app.js');
  assert.doesNotMatch(js.text, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/,
    'the script never builds markup from strings');
});

test('unknown paths: 404 JSON under /api/, the page anywhere else', async () => {
  for (const p of ['/api/nope', '/api/teams/dev/nope', '/api', '/mcp/extra']) {
    const r = await api('GET', p);
    assert.equal(r.status, 404, p);
    assert.equal(r.headers.get('content-type'), 'application/json', p);
    assert.deepEqual(r.json, {error: 'no such route'}, p);
  }
  const missing = await api('GET', '/assets/missing.js');
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.json, {error: 'no such asset: missing.js'});
  const index = await api('GET', '/');
  for (const p of ['/teams/dev', '/teams/dev/board', '/anything/else']) {
    const r = await api('GET', p);
    assert.equal(r.status, 200, p);
    assert.equal(r.headers.get('content-type'), 'text/html; charset=utf-8', p);
    assert.equal(r.text, index.text, p);
  }
  // The page's routes are GET only; other methods keep their answers.
  const post = await api('POST', '/somewhere');
  assert.equal(post.status, 404);
  assert.deepEqual(post.json, {error: 'no such route'});
  const postRoot = await api('POST', '/');
  assert.equal(postRoot.status, 405);
  const getPosts = await api('GET', '/api/teams/dev/posts');
  assert.equal(getPosts.status, 405, 'a path with a POST route still answers 405 to GET');
});

test('the page loads with no console errors and shows the team live', {timeout: SLOW}, async () => {
  await page.goto(BASE + '/');
  await page.locator('#conn[data-state="live"]').waitFor({timeout: LIVE});
  await page.locator('#agents .agent').nth(3).waitFor({timeout: LIVE});
  assert.equal(new URL(page.url()).pathname, '/teams/dev', 'the team is in the URL');
  assert.equal(await page.locator('#team-select').inputValue(), 'dev');
  assert.equal(await page.locator('#conn .conn-text').textContent(), 'Live');
  assert.deepEqual(await page.locator('#agents .agent').evaluateAll(
    (els) => els.map((e) => e.dataset.agent)), ['manager', 'coder', 'reviewer', 'tester'],
  'the leader first, then by id');
  // Every example agent is scripted and labelled so; the leader is marked.
  assert.equal(await page.locator('#agents .badge.runtime.scripted').count(), 4);
  assert.equal(await page.locator('#agents .agent[data-agent="manager"] .badge.lead').count(), 1);
  assert.equal(await page.locator('#agents .agent[data-agent="coder"] .status-pill').textContent(), 'idle');
  for (const s of ['Pending', 'Claimed', 'In progress', 'Completed', 'Failed']) {
    await page.locator('#board .col h3', {hasText: s}).waitFor({timeout: LIVE});
  }
  assert.equal(await page.locator('#room-log').getAttribute('aria-live'), 'polite');
  await page.waitForTimeout(300); // let any late error surface
  assert.deepEqual(consoleErrors, [], 'no console errors');
  await shot('loaded');
});

test('creating a task in the form shows its card in pending', {timeout: SLOW}, async () => {
  await page.locator('#task-subject').fill('Write the docs');
  await page.locator('#task-priority').fill('2');
  await page.locator('#task-subject').press('Enter');
  const c = page.locator('#col-pending .card', {hasText: 'Write the docs'});
  await c.waitFor({timeout: LIVE});
  const id = await c.getAttribute('data-task-id');
  const task = (await api('GET', `/api/tasks/${id}`)).json.task;
  assert.equal(task.subject, 'Write the docs');
  assert.equal(task.status, 'pending');
  assert.equal(task.priority, 2);
  assert.equal(await c.locator('.task-id').textContent(), `#${id}`);
  assert.equal(await c.locator('.prio').textContent(), 'P2');
  assert.equal(await page.locator('#task-subject').inputValue(), '', 'the form is cleared');

  // A second task that waits for the first: its card says so.
  await page.locator('#task-subject').fill('Ship it');
  await page.locator('#task-deps').fill(`#${id}`);
  await page.locator('#task-deps').press('Enter');
  const dep = page.locator('#col-pending .card', {hasText: 'Ship it'});
  await dep.waitFor({timeout: LIVE});
  assert.equal(await dep.locator('.blocked-by').textContent(), `blocked by #${id}`);
  assert.equal(await page.locator('#col-pending .count').textContent(), '2');
  // The board's reflection reaches the room as a system line.
  await room(`Task #${id} "Write the docs" created.`).waitFor({timeout: LIVE});
  assert.equal(await room(`Task #${id} "Write the docs" created.`).getAttribute('class'), 'post system');
  await shot('task-created');
});

test('a post made by the CLI in another process appears in the room within 1 s', {timeout: SLOW}, async () => {
  const mark = consoleErrors.length;
  const text = `Hello from the CLI, pid ${process.pid}`;
  cli('chat', 'post', 'dev', '--as', 'coder', text);
  await room(text).waitFor({timeout: 1000});
  const post = room(text);
  assert.equal(await post.getAttribute('data-author'), 'coder');
  assert.match(await post.getAttribute('class'), /\bpeer\b/);
  assert.equal(await post.locator('.author').textContent(), 'coder');

  // A user's post from the CLI is shown as the user's.
  cli('chat', 'post', 'dev', 'And one from the user, @coder');
  const mine = room('And one from the user');
  await mine.waitFor({timeout: 1000});
  assert.match(await mine.getAttribute('class'), /\buser\b/);
  assert.equal(await mine.locator('.mention').textContent(), '@coder');

  // Authors keep one color each: coder's name and avatar share a hue.
  cli('chat', 'post', 'dev', '--as', 'reviewer', 'Reviewed; looks good.');
  await room('Reviewed; looks good.').waitFor({timeout: 1000});
  const hue = async (who) => page.locator(`#room-log .post.peer[data-author="${who}"]`).first()
    .evaluate((e) => e.style.getPropertyValue('--hue'));
  assert.notEqual(await hue('coder'), await hue('reviewer'));
  assert.deepEqual(errorsSince(mark), []);
  await shot('cli-post');
});

test('posting in the room box posts as the user; Enter sends', {timeout: SLOW}, async () => {
  await page.locator('#post-text').fill('Typed in the dashboard <b>not bold</b>');
  await page.locator('#post-text').press('Enter');
  const post = room('Typed in the dashboard');
  await post.waitFor({timeout: LIVE});
  assert.match(await post.getAttribute('class'), /\buser\b/);
  // Text stays text: markup in a post is shown, never interpreted.
  assert.equal(await post.locator('.bubble').textContent(), 'Typed in the dashboard <b>not bold</b>');
  assert.equal(await post.locator('b').count(), 0);
  assert.equal(await page.locator('#post-text').inputValue(), '');
  const last = await api('GET', '/api/team-chat?teamId=dev&sinceSeq=0&limit=500');
  const p = last.json.posts.at(-1);
  assert.equal(p.body, 'Typed in the dashboard <b>not bold</b>');
  assert.equal(p.kind, 'user');
  assert.equal(p.authorAgentId, 'user');
});

test('a subtask\'s card is indented under its parent and names it', {timeout: SLOW}, async () => {
  const parent = JSON.parse(cli('task', 'create', 'dev', 'Parent of one', '--json')).id;
  const child = JSON.parse(cli('task', 'create', 'dev', 'Child of one', '--parent', String(parent), '--json')).id;
  await card('pending', child).waitFor({timeout: LIVE});
  const c = card('pending', child);
  assert.equal(await c.locator('.parent-ref').textContent(), `\u21b3 #${parent}`);
  assert.match(await c.getAttribute('class'), /\bsubtask\b/);
  assert.equal(await card('pending', parent).locator('.parent-ref').count(), 0);
  // the child follows its parent in the column
  const ids = await page.locator('#col-pending .card').evaluateAll(
    (els) => els.map((e) => Number(e.dataset.taskId)));
  assert.equal(ids.indexOf(child), ids.indexOf(parent) + 1);
  // leave no ready work behind for the autorun test to find
  cli('task', 'cancel', String(child));
  cli('task', 'cancel', String(parent));
});

test('a task claimed through MCP moves to "claimed" live', {timeout: SLOW}, async () => {
  const subject = 'Claim me over MCP';
  const id = JSON.parse(cli('task', 'create', 'dev', subject, '--json')).id;
  await card('pending', id).waitFor({timeout: LIVE});

  const attach = JSON.parse(cli('attach', 'coder', '--format', 'json', '--port', String(PORT)));
  const res = await fetch(attach.url, {
    method: 'POST',
    headers: {'Content-Type': 'application/json', 'Accept': 'application/json, text/event-stream'},
    body: JSON.stringify({jsonrpc: '2.0', id: 1, method: 'tools/call',
      params: {name: 'task_claim', arguments: {task_id: id}}}),
  });
  const rpc = await res.json();
  assert.equal(rpc.result.isError, undefined, JSON.stringify(rpc));
  assert.equal(rpc.result.structuredContent.task.owner, 'coder');

  await card('claimed', id).waitFor({timeout: LIVE});
  assert.equal(await card('pending', id).count(), 0);
  assert.equal(await card('claimed', id).locator('.owner-name').textContent(), 'coder');
  // The agent's card shows its current task.
  const coder = page.locator('#agents .agent[data-agent="coder"] .agent-task');
  await page.waitForFunction(([sel, want]) => document.querySelector(sel).textContent.includes(want),
    ['#agents .agent[data-agent="coder"] .agent-task', `#${id} ${subject}`], {timeout: LIVE});
  assert.equal(await coder.textContent(), `#${id} ${subject}`);

  // Started by the CLI: it moves on to "in progress".
  cli('task', 'start', String(id), '--as', 'coder');
  await card('in_progress', id).waitFor({timeout: LIVE});
  await shot('mcp-claimed');
});

test('agent status updates live', {timeout: SLOW}, async () => {
  cli('agent', 'set-status', 'tester', 'working');
  const pill = page.locator('#agents .agent[data-agent="tester"] .status-pill');
  await page.locator('#agents .agent[data-agent="tester"][data-status="working"]').waitFor({timeout: LIVE});
  assert.equal(await pill.textContent(), 'working');
  cli('agent', 'set-status', 'tester', 'idle');
  await page.locator('#agents .agent[data-agent="tester"][data-status="idle"]').waitFor({timeout: LIVE});
  assert.equal(await pill.textContent(), 'idle');
});

test('autorun: an agent card shows woken, then working, then idle, live', {timeout: SLOW}, async () => {
  // an agent held at each state until the test lets it go, so no state
  // is only a moment long (on a loaded machine "working" and "idle" could
  // reach the page together, and the card show only the last): "woken"
  // by a tripped budget, "working" by a turn that waits for a file
  const hold = fs.mkdtempSync(path.join(os.tmpdir(), 'huddle-runner-'));
  const go = path.join(hold, 'go');
  cli('agent', 'add', 'dev', 'runner', '--runtime', 'exec', '--config',
    JSON.stringify({command: ['sh', '-c',
      'cat >/dev/null; while [ -d "${0%/*}" ] && [ ! -e "$0" ]; do sleep 0.05; done; echo ran the job',
      go]}));
  cli('budget', 'set', '--agent', 'runner', '--limit-cents', '0', '--mode', 'cap');
  const card = (st) => page.locator(`#agents .agent[data-agent="runner"][data-status="${st}"]`);
  await card('idle').waitFor({timeout: LIVE});
  cli('team', 'update', 'dev', '--autorun', 'on');
  try {
    cli('send', 'please run the job', '--team', 'dev', '--from', 'manager', '--to', 'runner');
    await card('woken').waitFor({timeout: LIVE});
    assert.equal(await page.locator('#agents .agent[data-agent="runner"] .status-pill').textContent(), 'woken');
    await shot('autorun-woken');
    cli('budget', 'set', '--agent', 'runner', '--limit-cents', '1000', '--mode', 'cap');
    await card('working').waitFor({timeout: LIVE});
    await shot('autorun-working');
    fs.writeFileSync(go, '');
    await card('idle').waitFor({timeout: LIVE});
    await room('ran the job').first().waitFor({timeout: LIVE});
    cli('agent', 'park', 'runner', '--reason', 'taking a break');
    await page.locator('#agents .agent[data-agent="runner"] .agent-parked', {hasText: 'parked: taking a break'})
      .waitFor({timeout: LIVE});
    cli('agent', 'unpark', 'runner');
    await page.locator('#agents .agent[data-agent="runner"] .agent-parked').waitFor({state: 'detached', timeout: LIVE});
  } finally {
    cli('team', 'update', 'dev', '--autorun', 'off');
    // a turn still waiting ends when its file or its directory is gone
    fs.rmSync(hold, {recursive: true, force: true});
  }
});

test('the events log is live and filterable', {timeout: SLOW}, async () => {
  const rows = page.locator('#events tbody tr');
  await page.locator('#events tbody tr[data-kind="agent_status"]').first().waitFor({timeout: LIVE});
  const all = await rows.count();
  assert.ok(all >= 10, `the log shows what happened (${all} rows)`);
  // Newest first.
  const seqs = await rows.evaluateAll((els) => els.map((e) => Number(e.dataset.seq)));
  assert.deepEqual(seqs, [...seqs].sort((a, b) => b - a));

  await page.locator('#events-kind').selectOption('task_claimed');
  const kinds = await rows.evaluateAll((els) => els.map((e) => e.dataset.kind));
  assert.ok(kinds.length >= 1);
  assert.ok(kinds.every((k) => k === 'task_claimed'), kinds.join());
  await page.locator('#events-kind').selectOption('');

  await page.locator('#events-filter').fill('tester');
  const details = await rows.evaluateAll((els) => els.map((e) => e.textContent));
  assert.ok(details.length >= 2);
  assert.ok(details.every((t) => t.includes('tester')), details.join(' | '));
  await page.locator('#events-filter').fill('no event says this');
  assert.equal(await rows.count(), 0);
  assert.equal(await page.locator('#events-empty').textContent(), 'No event matches the filter.');
  await page.locator('#events-filter').fill('');
  assert.equal(await rows.count(), all);
});

test('asking the team shows each reply as it arrives, once',
  {timeout: SLOW, skip: !hasConversations && 'POST /api/teams/:team/chat is not on this server yet (404)'},
  async () => {
    const mark = consoleErrors.length;
    await page.locator('#ask-text').fill('all hands: how is everyone doing?');
    await page.locator('#ask-text').press('Enter');
    const conv = page.locator('#conversations .conv').first();
    await conv.waitFor({timeout: LIVE});
    const id = await conv.getAttribute('data-conversation');
    assert.equal(await conv.locator('.conv-q').textContent(), 'all hands: how is everyone doing?');
    // The leader's reply arrives first, before the conversation ends.
    await conv.locator('.reply[data-agent="manager"]').first().waitFor({timeout: SLOW});
    await page.locator(`#conversations .conv[data-conversation="${id}"][data-status="completed"]`)
      .waitFor({timeout: SLOW});
    const snap = (await api('GET', `/api/conversations/${id}`)).json;
    assert.equal(snap.status, 'completed');
    const shown = await conv.locator('.reply').evaluateAll((els) => els.map((e) => [
      e.dataset.agent, Number(e.dataset.seq)]));
    assert.deepEqual(shown, snap.replies.map((r) => [r.agent, r.seq]), 'every reply, in order');
    // the replies are the answer (rendered: dashboard-words.test.mjs); the
    // aggregate is not shown a second time
    assert.equal(await conv.locator('.answer, .answer-body').count(), 0);
    // Each reply is also a post in the room, as that agent.
    await page.locator('#room-log .post.peer[data-author="manager"]').first().waitFor({timeout: LIVE});
    assert.deepEqual(errorsSince(mark), []);
    await shot('ask-the-team');
  });

// A real runtime: Claude Code (pinned in package.json) against the fake
// model, its turn run by the server's conversation engine, its MCP server
// the server itself over a signed attach URL.
const CLAUDE = path.join(path.dirname(new URL(import.meta.url).pathname),
  'node_modules', '.bin', 'claude');
const hasClaude = fs.existsSync(CLAUDE);

async function startFakeModel() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'huddle-fake-'));
  const portFile = path.join(dir, 'port');
  const child = spawn(process.execPath, [
    path.join(path.dirname(new URL(import.meta.url).pathname), 'fake-model.mjs'),
    '--port-file', portFile, '--log', path.join(dir, 'log.jsonl')], {stdio: 'ignore'});
  for (let i = 0; i < 100 && !fs.existsSync(portFile); i++) await sleep(100);
  const port = Number(fs.readFileSync(portFile, 'utf8'));
  return {port, stop: () => {
    child.kill('SIGTERM');
    fs.rmSync(dir, {recursive: true, force: true});
  }};
}

test('a Claude Code turn shows its tool calls live on its card, then its spend',
  {timeout: SLOW, skip: (!hasConversations && 'no conversations on this server') ||
    (!hasClaude && 'needs tests/e2e/node_modules (npm ci in tests/e2e)')},
  async () => {
    const mark = consoleErrors.length;
    const fake = await startFakeModel();
    try {
      cli('agent', 'add', 'dev', 'live', '--role', 'looks around', '--runtime', 'claude-code',
        '--config', JSON.stringify({bin: CLAUDE, home: 'private', timeout_s: 60, env: {
          ANTHROPIC_BASE_URL: `http://127.0.0.1:${fake.port}`, ANTHROPIC_API_KEY: 'sk-ant-fake',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1',
          DISABLE_AUTOUPDATER: '1', DISABLE_ERROR_REPORTING: '1', CLAUDE_CODE_MAX_RETRIES: '0'}}));
      const card = page.locator('#agents .agent[data-agent="live"]');
      await card.waitFor({timeout: LIVE});
      assert.equal(await card.locator('.badge.runtime').textContent(), 'claude-code');
      assert.equal(await card.locator('.spent').textContent(), '$0');
      const script = {turns: [{tool: {name: 'task_list', input: {}}},
        {tool: {name: 'task_list', input: {}}, delay_ms: 4000}, {text: 'Looked around.'}]};
      const r = await api('POST', '/api/teams/dev/chat',
        {message: `@live look around\nFAKE_SCRIPT:${JSON.stringify(script)}`});
      assert.ok(r.status === 200 || r.status === 202, r.text);
      // the first call is done while the turn still runs (the model
      // answers its second request 4 s later)
      await card.locator('.live-calls .call.done').first().waitFor({timeout: SLOW});
      assert.equal(await card.getAttribute('data-status'), 'working');
      assert.match(await card.locator('.live-calls .call.done').first().textContent(), /✓ task_list/);
      await shot('live-tool-calls');
      // the turn ends: the calls go, the spend stays
      await page.locator('#agents .agent[data-agent="live"][data-status="idle"]').waitFor({timeout: SLOW});
      assert.equal(await card.locator('.live-calls').count(), 0);
      // in cents, "< $0.01" below one (the exact spend is its title)
      assert.match(await card.locator('.spent').textContent(), /^(\$0\.\d\d|< \$0\.01)$/);
      assert.notEqual(await card.locator('.spent').textContent(), '$0');
      await page.locator('#room-log .post.peer[data-author="live"]', {hasText: 'Looked around.'})
        .waitFor({timeout: LIVE});
      assert.deepEqual(errorsSince(mark), []);
    } finally {
      fake.stop();
    }
  });

test('a failed turn is shown red, on its reply and on its agent, with the message',
  {timeout: SLOW, skip: !hasConversations && 'no conversations on this server'},
  async () => {
    const mark = consoleErrors.length;
    cli('agent', 'add', 'dev', 'broken', '--runtime', 'exec', '--config',
      JSON.stringify({command: ['/bin/sh', '-c', 'cat >/dev/null; echo "it broke" >&2; exit 3']}));
    const card = page.locator('#agents .agent[data-agent="broken"]');
    await card.waitFor({timeout: LIVE});
    await page.locator('#ask-text').fill('@broken do the thing');
    await page.locator('#ask-text').press('Enter');
    await page.locator('#agents .agent[data-agent="broken"][data-status="error"]').waitFor({timeout: SLOW});
    await card.locator('.agent-error').waitFor({timeout: LIVE});
    // the card says why: the reason the failed turn recorded (live, from
    // agent_status / turn_failed), in red
    assert.equal(await card.locator('.agent-error').textContent(), 'exit status 3: it broke');
    assert.equal(await card.evaluate((el) => getComputedStyle(el).borderColor),
      await page.evaluate(() => getComputedStyle(document.querySelector('.agent-error')).color));
    const reply = page.locator('#conversations .reply.failed[data-agent="broken"]').first();
    await reply.waitFor({timeout: LIVE});
    assert.equal(await reply.locator('.body').textContent(), '[error: exit status 3: it broke]');
    assert.equal(await reply.locator('.badge.error').textContent(), 'error');
    // the conversation holding it is marked too, and names who failed
    const conv = page.locator('#conversations .conv',
      {has: page.locator('.reply.failed[data-agent="broken"]')}).first();
    assert.match(await conv.getAttribute('class'), /\bfailed\b/);
    assert.equal(await conv.locator('.conv-error').textContent(), 'broken failed');
    // the snapshot says the same as the events: the REST reply is flagged
    const convId = await conv.getAttribute('data-conversation');
    const snap = await api('GET', `/api/conversations/${convId}`);
    assert.equal(snap.json.replies.find((r) => r.agent === 'broken').isError, true);
    // a reload of the agents list (another agent added) keeps the reason,
    // now from status_reason in GET /api/teams/dev/agents
    const listed = await api('GET', '/api/teams/dev/agents');
    assert.equal(listed.json.agents.find((a) => a.id === 'broken').status_reason, 'exit status 3: it broke');
    cli('agent', 'add', 'dev', 'bystander');
    await page.locator('#agents .agent[data-agent="bystander"]').waitFor({timeout: LIVE});
    assert.equal(await card.getAttribute('data-status'), 'error');
    assert.equal(await card.locator('.agent-error').textContent(), 'exit status 3: it broke');
    await shot('failed-turn');
    assert.deepEqual(errorsSince(mark), []);
  });

test('a file a reply attaches is a download link on that reply',
  {timeout: SLOW, skip: !hasConversations && 'no conversations on this server'},
  async () => {
    const mark = consoleErrors.length;
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'huddle-filer-'));
    try {
      fs.writeFileSync(path.join(work, 'note.txt'), 'a note for the user\n');
      cli('agent', 'add', 'dev', 'filer', '--runtime', 'exec', '--config',
        JSON.stringify({command: ['/bin/sh', '-c', 'cat >/dev/null; echo "Here it is. [send_file: note.txt]"'], cwd: work}));
      await page.locator('#agents .agent[data-agent="filer"]').waitFor({timeout: LIVE});
      await page.locator('#ask-text').fill('@filer send the note');
      await page.locator('#ask-text').press('Enter');
      const reply = page.locator('#conversations .reply[data-agent="filer"]').first();
      await reply.waitFor({timeout: SLOW});
      const link = reply.locator('.reply-files a.file');
      await link.waitFor({timeout: LIVE});
      assert.equal(await reply.locator('.body').textContent(), 'Here it is.');
      assert.equal(await link.getAttribute('download'), 'note.txt');
      const href = await link.getAttribute('href');
      assert.match(href, /^\/api\/conversations\/[0-9a-f-]{36}\/files\/\d+$/);
      const got = await api('GET', href);
      assert.equal(got.status, 200);
      assert.equal(got.text, 'a note for the user\n');
      assert.match(got.headers.get('content-disposition'), /^attachment; filename="note.txt"/);
      await shot('reply-file');
      assert.deepEqual(errorsSince(mark), []);
    } finally {
      cli('agent', 'rm', 'filer');
      fs.rmSync(work, {recursive: true, force: true});
    }
  });

test('asking the team says so clearly when this server has no conversations',
  {timeout: SLOW, skip: hasConversations && 'conversations are available on this server'},
  async () => {
    await page.locator('#ask-text').fill('all hands: anyone there?');
    await page.locator('#ask-text').press('Enter');
    await page.waitForFunction(() => /not available/.test(document.querySelector('#ask-msg').textContent),
      null, {timeout: LIVE});
    assert.equal(await page.locator('#ask-msg').textContent(),
      'Conversations are not available on this server yet (POST /api/teams/dev/chat answered 404). ' +
      'Post in the room instead.');
    assert.equal(await page.locator('#ask-msg').getAttribute('data-tone'), 'warn');
    assert.equal(await page.locator('#ask-text').inputValue(), 'all hands: anyone there?',
      'the question is kept');
    await page.locator('#ask-text').fill('');
    await shot('ask-unavailable');
  });

test('starting an exchange shows its turns and end reason',
  {timeout: SLOW, skip: !hasExchanges && 'POST /api/team-chat/exchange is not on this server yet (404)'},
  async () => {
    const mark = consoleErrors.length;
    await page.locator('#exchange-stimulus').fill('Plan the release: who does what?');
    await page.locator('#exchange-turns').fill('3');
    await page.locator('#exchange-turns').press('Enter');
    await page.locator('#exchange-result .end-reason').waitFor({timeout: SLOW});
    const reason = await page.locator('#exchange-result .end-reason').textContent();
    assert.ok(['max_turns', 'no_pending_obligation', 'budget_paused'].includes(reason), reason);
    const turns = await page.locator('#exchange-turn-list .turn').evaluateAll(
      (els) => els.map((e) => e.dataset.speaker));
    assert.ok(turns.length >= 1 && turns.length <= 3, `turns: ${turns.join()}`);
    assert.match(await page.locator('#exchange-result').textContent(),
      new RegExp(`after ${turns.length} turns?`));
    // The first speaker is the leader, and its turn is a post in the room.
    assert.equal(turns[0], 'manager');
    await page.locator('#room-log .post.peer[data-author="manager"]').first().waitFor({timeout: LIVE});
    assert.deepEqual(errorsSince(mark), []);
    await shot('exchange');
  });

test('starting an exchange says so clearly when this server has no exchanges',
  {timeout: SLOW, skip: hasExchanges && 'exchanges are available on this server'},
  async () => {
    await page.locator('#exchange-stimulus').fill('Plan the release');
    await page.locator('#exchange-stimulus').press('Enter');
    await page.waitForFunction(() => /not available/.test(document.querySelector('#exchange-msg').textContent),
      null, {timeout: LIVE});
    assert.equal(await page.locator('#exchange-msg').textContent(),
      'Exchanges are not available on this server yet (POST /api/team-chat/exchange answered 404).');
    assert.equal(await page.locator('#exchange-panel button[type="submit"]').isDisabled(), false);
    await page.locator('#exchange-stimulus').fill('');
    await shot('exchange-unavailable');
  });

// A second server on the same home, with a bearer token, on a free port.
async function startTokenServer(token) {
  const child = spawn(HUDDLE, ['serve', '--port', '0', '--token', token],
    {stdio: ['ignore', 'pipe', 'ignore']});
  let out = '';
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no port from huddle serve: ${out}`)), LIVE);
    child.stdout.on('data', (b) => {
      out += b;
      const m = /^huddle is running at http:\/\/127\.0\.0\.1:(\d+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`huddle serve exited ${code}: ${out}`)));
  });
  const stopped = new Promise((resolve) => child.once('exit', (code, sig) => resolve(code ?? sig)));
  return {port, stop: async () => {
    child.kill('SIGTERM');
    return stopped;
  }};
}

test('with --token, the page loads for anyone and reaches the data with #token=', {timeout: SLOW}, async () => {
  const token = 'tok-' + process.pid;
  const srv = await startTokenServer(token);
  const base = `http://127.0.0.1:${srv.port}`;
  const pages = [];
  try {
    // The page and its files hold no data: no token needed.
    for (const p of ['/', '/teams/dev', '/assets/app.js']) {
      assert.equal((await fetch(base + p)).status, 200, p);
    }
    const denied = await fetch(base + '/api/teams');
    assert.equal(denied.status, 401);
    assert.deepEqual(await denied.json(), {error: 'missing or wrong bearer token'});
    assert.equal((await fetch(base + '/api/nope')).status, 401, 'unknown API paths too');
    assert.equal((await fetch(base + '/api/teams', {headers: {Authorization: `Bearer ${token}`}})).status, 200);

    const withToken = await ctx.newPage();
    pages.push(withToken);
    await withToken.goto(`${base}/#token=${token}`);
    await withToken.locator('#conn[data-state="live"]').waitFor({timeout: LIVE});
    await withToken.locator('#agents .agent').nth(3).waitFor({timeout: LIVE});
    assert.equal(new URL(withToken.url()).hash, '', 'the token leaves the address bar');
    // Live through the token too: the stream carries it.
    cli('chat', 'post', 'dev', '--as', 'tester', 'Seen through the token');
    await withToken.locator('#room-log .post', {hasText: 'Seen through the token'}).waitFor({timeout: LIVE});

    const without = await ctx.newPage();
    pages.push(without);
    await without.goto(`${base}/`);
    await without.locator('#no-teams', {hasText: 'This server needs its token'}).waitFor({timeout: LIVE});
    assert.equal(await without.locator('#no-teams').textContent(),
      `This server needs its token: open this page as ${base}/#token=<token>.`);
  } finally {
    for (const p of pages) await p.close();
    assert.equal(await srv.stop(), 0, 'the token server stops cleanly');
  }
});

// Start `huddle serve` on PORT again; the old one's port may take a moment
// to be free, so a failed bind is retried (bounded).
async function restartServer() {
  const deadline = Date.now() + 20000;
  for (;;) {
    const logFd = fs.openSync(SERVE_LOG, 'a');
    const child = spawn(HUDDLE, ['serve', '--port', String(PORT)],
      {detached: true, stdio: ['ignore', 'ignore', logFd]});
    fs.closeSync(logFd);
    fs.writeFileSync(PIDFILE, String(child.pid));
    const exited = new Promise((resolve) => child.once('exit', () => resolve(true)));
    child.unref();
    for (;;) {
      const up = await fetch(BASE + '/api/teams').then((r) => r.ok, () => false);
      if (up) return;
      if (await Promise.race([exited, sleep(100).then(() => false)])) break;
      if (Date.now() > deadline) throw new Error('the restarted server never answered');
    }
    if (Date.now() > deadline) throw new Error('could not restart huddle serve on the same port');
    await sleep(250);
  }
}

test('killing and restarting the server: the page reconnects and shows what happened meanwhile',
  {timeout: SLOW}, async () => {
    const mark = consoleErrors.length;
    const pid = Number(fs.readFileSync(PIDFILE, 'utf8'));
    process.kill(pid, 'SIGKILL');
    await page.locator('#conn:is([data-state="reconnecting"], [data-state="offline"])').waitFor({timeout: LIVE});
    await shot('server-down');

    // While it is down, other processes go on writing.
    const text = 'Posted while the server was down';
    cli('chat', 'post', 'dev', '--as', 'manager', text);
    const id = JSON.parse(cli('task', 'create', 'dev', 'Created while the server was down', '--json')).id;
    cli('agent', 'set-status', 'reviewer', 'working');

    await restartServer();
    await page.locator('#conn[data-state="live"]').waitFor({timeout: SLOW});
    await room(text).waitFor({timeout: LIVE});
    await card('pending', id).waitFor({timeout: LIVE});
    await page.locator('#agents .agent[data-agent="reviewer"][data-status="working"]').waitFor({timeout: LIVE});

    // Nothing lost, nothing twice: the transcript is the room, seq by seq.
    const want = (await api('GET', '/api/team-chat?teamId=dev&sinceSeq=0&limit=500')).json.posts.map((p) => p.seq);
    const shown = await page.locator('#room-log .post').evaluateAll((els) => els.map((e) => Number(e.dataset.seq)));
    assert.deepEqual(shown, want);
    assert.equal(await room(text).count(), 1);
    // And it is live again.
    cli('chat', 'post', 'dev', '--as', 'tester', 'Back to normal');
    await room('Back to normal').waitFor({timeout: LIVE});
    // The only console errors are the browser's failed connections while
    // the server was down.
    assert.deepEqual(errorsSince(mark, /ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|ERR_EMPTY_RESPONSE|ERR_INCOMPLETE_CHUNKED_ENCODING|ERR_NETWORK_CHANGED/), []);
    await shot('reconnected');
  });
