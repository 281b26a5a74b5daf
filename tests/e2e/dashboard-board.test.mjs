// dashboard-board.test.mjs -- acting from the board (web/board.js,
// web/forms.js) in Debian's headless Chromium through playwright-core,
// against a real `huddle serve` with an empty home, started by
// test-dashboard-board.sh (env: HUDDLE_PORT, HUDDLE_SHOTS, CHROMIUM).
// The page creates the team and its agents; every drawer action and every
// drag is then checked against the REST API (the truth), and the card
// must move on the page. The drawer tests run at a desktop width and at a
// phone's. The tests run in order and share one page.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';

import {BASE, DESKTOP, PHONE, PORT, SHOTS, api, numberedShots, onConsoleError, openBrowser} from './browser.mjs';

// A bound on waits so a broken page fails instead of hanging; never a
// measure of speed.
const LIVE = 15000;
const TEAM = 'board';

assert.ok(PORT && SHOTS, 'run me through test-dashboard-board.sh');

async function task(id) {
  const r = await api('GET', `/api/tasks/${id}`);
  assert.equal(r.status, 200, r.text);
  return r.json.task;
}

async function newTask(subject, extra) {
  const r = await api('POST', `/api/teams/${TEAM}/tasks`, {subject, ...extra});
  assert.equal(r.status, 201, r.text);
  return r.json.task.id;
}

let page;
let closeBrowser;
const consoleErrors = [];
const shot = numberedShots(() => page);

// The browser reports each refused request as a console error naming its
// status; those are expected exactly where a refusal is the point, and
// are counted there. Anything else is a failure.
function unexpectedErrors() {
  return consoleErrors.filter((e) => !e.expected);
}
function expectRefusals(n, re) {
  const hits = consoleErrors.filter((e) => !e.expected && re.test(e.url) &&
    /the server responded with a status of 4\d\d/.test(e.text));
  assert.equal(hits.length, n, `refusals of ${re}: ${JSON.stringify(consoleErrors)}`);
  for (const e of hits) e.expected = true;
}

const card = (status, id) => page.locator(`#col-${status} .card[data-task-id="${id}"]`);
const drawer = () => page.locator('#task-drawer');

// On a phone the open drawer covers the board: it is closed first, as a
// user would.
async function openCard(id) {
  if (await drawer().isVisible()) await closeDrawer();
  await page.locator(`.card[data-task-id="${id}"]`).click();
  await drawer().waitFor({state: 'visible', timeout: LIVE});
  await page.locator('#drawer-title').filter({hasText: `#${id}`}).waitFor({timeout: LIVE});
}

async function closeDrawer() {
  await page.locator('#task-drawer .drawer-close').click();
  await drawer().waitFor({state: 'hidden', timeout: LIVE});
}

// Wait until the REST API says the task is so (the page's action is
// asynchronous).
async function until(id, pred, what) {
  for (let i = 0; i < LIVE / 100; i++) {
    const t = await task(id);
    if (pred(t)) return t;
    await page.waitForTimeout(100);
  }
  assert.fail(`task ${id} never became ${what}: ${JSON.stringify(await task(id))}`);
}

before(async () => {
  ({page, close: closeBrowser} = await openBrowser(DESKTOP));
  onConsoleError(page, (text, url) => consoleErrors.push({text, url}));
});

after(() => closeBrowser?.());

test('the new scripts are served and never build markup from strings', async () => {
  for (const f of ['board.js', 'forms.js']) {
    const r = await api('GET', `/assets/${f}`);
    assert.equal(r.status, 200, f);
    assert.doesNotMatch(r.text, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/, f);
  }
  const css = await api('GET', '/assets/board.css');
  assert.equal(css.status, 200);
  const rt = await api('GET', '/api/runtimes');
  assert.equal(rt.status, 200);
  assert.deepEqual(rt.json.runtimes.map((x) => x.name), ['scripted', 'exec', 'claude-code', 'codex', 'native', 'hermes', 'openclaw']);
  assert.equal(rt.json.runtimes[0].scripted, true);
});

test('a team is created from the page and shown', async () => {
  await page.goto(BASE + '/');
  await page.locator('#no-teams').waitFor({state: 'visible', timeout: LIVE});
  await page.locator('#new-team').click();
  const dlg = page.locator('#team-dialog');
  await dlg.waitFor({state: 'visible'});
  // a refused id keeps the dialog open with the server's reason
  await page.fill('#team-new-id', 'Bad Id');
  await dlg.locator('button[type="submit"]').click();
  const refused = await api('POST', '/api/teams', {id: 'Bad Id'});
  assert.equal(refused.status, 400);
  await assert.doesNotReject(dlg.locator('#team-dialog-msg', {hasText: refused.json.error})
    .waitFor({timeout: LIVE}));
  expectRefusals(1, /\/api\/teams$/);
  await page.fill('#team-new-id', TEAM);
  await page.fill('#team-new-name', 'Board team');
  await page.fill('#team-new-description', 'Made from the dashboard');
  await shot('new-team');
  await dlg.locator('button[type="submit"]').click();
  await dlg.waitFor({state: 'hidden', timeout: LIVE});
  const r = await api('GET', `/api/teams/${TEAM}`);
  assert.equal(r.status, 200);
  assert.equal(r.json.team.name, 'Board team');
  assert.equal(r.json.team.description, 'Made from the dashboard');
  await page.waitForURL(`${BASE}/teams/${TEAM}`, {timeout: LIVE});
  await page.locator('#team-meta', {hasText: 'Made from the dashboard'}).waitFor({timeout: LIVE});
  assert.equal(await page.locator('#team-select').inputValue(), TEAM);
});

test('agents are added from the page; a bad runtime or config is refused with the reason', async () => {
  const dlg = page.locator('#agent-dialog');
  await page.locator('#add-agent').click();
  await dlg.waitFor({state: 'visible'});
  // the runtimes offered are the server's
  await page.locator('#agent-new-runtime-hint', {hasText: 'scripted, exec, claude-code, codex, native'})
    .waitFor({timeout: LIVE});
  assert.deepEqual(await page.locator('#agent-runtimes option').evaluateAll((os) => os.map((o) => o.value)),
    ['scripted', 'exec', 'claude-code', 'codex', 'native', 'hermes', 'openclaw']);

  // a runtime this build does not have: the server's words
  await page.fill('#agent-new-id', 'ada');
  await page.fill('#agent-new-role', 'writer');
  await page.fill('#agent-new-runtime', 'openai');
  await dlg.locator('button[type="submit"]').click();
  const unknown = await api('POST', `/api/teams/${TEAM}/agents`, {id: 'ada', runtime: 'openai'});
  assert.equal(unknown.status, 400);
  assert.match(unknown.json.error, /^runtime "openai" is not available in this build: use scripted/);
  await page.locator('#agent-dialog-msg', {hasText: unknown.json.error}).waitFor({timeout: LIVE});
  expectRefusals(1, /\/agents$/);

  // config that is not JSON: refused before anything is sent
  await page.fill('#agent-new-runtime', 'scripted');
  await page.fill('#agent-new-config', '{"default": ');
  await dlg.locator('button[type="submit"]').click();
  await page.locator('#agent-dialog-msg', {hasText: 'The runtime config is not valid JSON: '})
    .waitFor({timeout: LIVE});
  assert.equal((await api('GET', '/api/agents/ada')).status, 404);

  // JSON of a shape the runtime refuses: the server names the field
  await page.fill('#agent-new-config', '{"rules": 5}');
  await dlg.locator('button[type="submit"]').click();
  const shape = await api('POST', `/api/teams/${TEAM}/agents`,
    {id: 'ada', runtime: 'scripted', runtime_config: {rules: 5}});
  assert.equal(shape.status, 400);
  await page.locator('#agent-dialog-msg', {hasText: shape.json.error}).waitFor({timeout: LIVE});
  expectRefusals(1, /\/agents$/);
  // what was typed is still there
  assert.equal(await page.locator('#agent-new-id').inputValue(), 'ada');
  await shot('agent-refused');

  await page.fill('#agent-new-config', '{"default": "On it."}');
  await page.check('#agent-new-leader');
  await dlg.locator('button[type="submit"]').click();
  await dlg.waitFor({state: 'hidden', timeout: LIVE});
  const ada = (await api('GET', '/api/agents/ada')).json.agent;
  assert.equal(ada.runtime, 'scripted');
  assert.equal(ada.role, 'writer');
  assert.equal(ada.leader, true);
  assert.deepEqual(ada.runtime_config, {default: 'On it.'});
  await page.locator('#agents .agent[data-agent="ada"]').waitFor({timeout: LIVE});

  // a second one, with the defaults
  await page.locator('#add-agent').click();
  await dlg.waitFor({state: 'visible'});
  assert.equal(await page.locator('#agent-new-id').inputValue(), '', 'the form starts afresh');
  await page.fill('#agent-new-id', 'bob');
  await dlg.locator('button[type="submit"]').click();
  await dlg.waitFor({state: 'hidden', timeout: LIVE});
  await page.locator('#agents .agent[data-agent="bob"]').waitFor({timeout: LIVE});
  assert.equal((await api('GET', '/api/agents/bob')).json.agent.runtime, 'scripted');
  await shot('agents-added');
  assert.deepEqual(unexpectedErrors(), []);
});

// Every action of the drawer, at one width.
async function drawerActions(size, tag) {
  await page.setViewportSize(size);
  const a = await newTask(`${tag} write the guide`, {description: 'The user guide, chapter 1'});
  const b = await newTask(`${tag} fix the build`);
  const c = await newTask(`${tag} ship`);
  const d = await newTask(`${tag} review`);
  await card('pending', a).waitFor({timeout: LIVE});

  await openCard(a);
  if (size === PHONE) {
    const box = await drawer().boundingBox();
    assert.equal(Math.round(box.width), PHONE.width, 'the drawer takes a phone\'s whole width');
  }
  await page.locator('#drawer-facts', {hasText: 'The user guide, chapter 1'}).waitFor({timeout: LIVE});
  // pending: assign or cancel, nothing else
  assert.ok(await page.locator('#drawer-assign').isVisible());
  assert.ok(await page.locator('#drawer-cancel').isVisible());
  for (const hidden of ['#drawer-start', '#drawer-release', '#drawer-retry', '#drawer-complete', '#drawer-fail']) {
    assert.ok(!(await page.locator(hidden).isVisible()), `${hidden} is hidden for a pending task`);
  }
  await shot(`${tag}-drawer-pending`);

  // assign (the user hands it to ada), start, release
  await page.selectOption('#drawer-agent', 'ada');
  await page.locator('#drawer-assign button[type="submit"]').click();
  let t = await until(a, (x) => x.status === 'claimed', 'claimed');
  assert.equal(t.owner, 'ada');
  await card('claimed', a).waitFor({timeout: LIVE});
  await page.locator('#task-drawer .drawer-status', {hasText: 'Claimed'}).waitFor({timeout: LIVE});

  await page.locator('#drawer-start').click();
  await until(a, (x) => x.status === 'in_progress', 'in progress');
  await card('in_progress', a).waitFor({timeout: LIVE});

  await page.locator('#drawer-release').click();
  t = await until(a, (x) => x.status === 'pending', 'pending');
  assert.equal(t.owner, null);
  await card('pending', a).waitFor({timeout: LIVE});

  // assign to bob, complete with a result
  await page.selectOption('#drawer-agent', 'bob');
  await page.locator('#drawer-assign button[type="submit"]').click();
  await until(a, (x) => x.status === 'claimed' && x.owner === 'bob', 'claimed by bob');
  await page.locator('#drawer-complete').waitFor({state: 'visible', timeout: LIVE});
  await page.fill('#drawer-result', 'Chapter 1 is <b>written</b>');
  await page.locator('#drawer-complete button[type="submit"]').click();
  t = await until(a, (x) => x.status === 'completed', 'completed');
  assert.equal(t.result, 'Chapter 1 is <b>written</b>');
  await card('completed', a).waitFor({timeout: LIVE});
  // shown as text, never as markup
  await page.locator('#drawer-facts .drawer-outcome', {hasText: 'Chapter 1 is <b>written</b>'})
    .waitFor({timeout: LIVE});
  assert.equal(await page.locator('#task-drawer b').count(), 0);

  // a comment from the page, and one from elsewhere, live
  await page.fill('#drawer-comment-text', `${tag}: looks good`);
  await page.locator('#drawer-comment button[type="submit"]').click();
  await page.locator('#drawer-comments .drawer-comment', {hasText: `${tag}: looks good`})
    .waitFor({timeout: LIVE});
  const outside = await api('POST', `/api/tasks/${a}/comment`, {body: `${tag}: from the API`});
  assert.equal(outside.status, 201);
  await page.locator('#drawer-comments .drawer-comment', {hasText: `${tag}: from the API`})
    .waitFor({timeout: LIVE});
  t = await task(a);
  assert.deepEqual(t.comments.map((x) => [x.author, x.body]),
    [['user', `${tag}: looks good`], ['user', `${tag}: from the API`]]);

  // the history is the task's events, as the REST API has them
  const ev = (await api('GET', `/api/events?team=${TEAM}&task=${a}&limit=200`)).json.events;
  assert.deepEqual(ev.map((x) => x.kind), ['task_created', 'task_claimed', 'status_changed',
    'status_changed', 'task_claimed', 'status_changed', 'task_comment', 'task_comment']);
  await page.locator(`#drawer-history .history-item[data-seq="${ev[ev.length - 1].seq}"]`)
    .waitFor({timeout: LIVE});
  assert.deepEqual(await page.locator('#drawer-history .history-item').evaluateAll(
    (ls) => ls.map((l) => Number(l.dataset.seq))), ev.map((x) => x.seq));
  await shot(`${tag}-drawer-completed`);

  // b: assign, fail with a reason, retry, cancel
  await openCard(b);
  await page.selectOption('#drawer-agent', 'ada');
  await page.locator('#drawer-assign button[type="submit"]').click();
  await until(b, (x) => x.status === 'claimed', 'claimed');
  await page.locator('#drawer-fail').waitFor({state: 'visible', timeout: LIVE});
  await page.fill('#drawer-reason', 'the disk is full');
  await page.locator('#drawer-fail button[type="submit"]').click();
  t = await until(b, (x) => x.status === 'failed', 'failed');
  assert.equal(t.reason, 'the disk is full');
  await card('failed', b).waitFor({timeout: LIVE});
  await page.locator('#drawer-facts', {hasText: 'the disk is full'}).waitFor({timeout: LIVE});
  await page.locator('#drawer-retry').click();
  t = await until(b, (x) => x.status === 'pending', 'pending again');
  assert.equal(t.reason, null);
  await card('pending', b).waitFor({timeout: LIVE});
  await page.locator('#drawer-cancel').waitFor({state: 'visible', timeout: LIVE});
  await page.locator('#drawer-cancel').click();
  await until(b, (x) => x.status === 'cancelled', 'cancelled');
  await card('cancelled', b).waitFor({state: 'attached', timeout: LIVE});

  // link: c depends on d, shown both ways
  await openCard(c);
  await page.selectOption('#drawer-dep', String(d));
  await page.locator('#drawer-link button[type="submit"]').click();
  t = await until(c, (x) => x.depends_on.includes(d), `dependent on ${d}`);
  assert.deepEqual(t.blocked_by, [d]);
  await page.locator(`#drawer-depends-on .task-link[data-task-id="${d}"]`).waitFor({timeout: LIVE});
  await card('pending', c).locator('.blocked-by', {hasText: `#${d}`}).waitFor({timeout: LIVE});
  assert.deepEqual((await task(d)).dependents, [c]);
  // from the link to the other task, whose drawer names c as waiting on it
  await page.locator(`#drawer-depends-on .task-link[data-task-id="${d}"]`).click();
  await page.locator('#drawer-title', {hasText: `#${d}`}).waitFor({timeout: LIVE});
  await page.locator(`#drawer-dependents .task-link[data-task-id="${c}"]`).waitFor({timeout: LIVE});
  await shot(`${tag}-drawer-linked`);
  await closeDrawer();

  // the keyboard (and a tap's) way in: focus a card, Enter, Escape
  await page.locator(`.card[data-task-id="${d}"]`).focus();
  await page.keyboard.press('Enter');
  await drawer().waitFor({state: 'visible', timeout: LIVE});
  await page.locator('#drawer-title', {hasText: `#${d}`}).waitFor({timeout: LIVE});
  await page.keyboard.press('Escape');
  await drawer().waitFor({state: 'hidden', timeout: LIVE});
  assert.equal(await page.evaluate(() => document.activeElement.dataset.taskId), String(d),
    'focus goes back to the card');
  assert.deepEqual(unexpectedErrors(), []);
}

test('every drawer action, at a desktop width', async () => {
  await drawerActions(DESKTOP, 'wide');
});

test('every drawer action, at a phone width', async () => {
  try {
    await drawerActions(PHONE, 'phone');
  } finally {
    await page.setViewportSize(DESKTOP);
  }
});

// Drag a card onto a column (native HTML5 drag and drop in Chromium).
async function drag(id, status) {
  const target = status === 'cancelled' ? page.locator('#col-cancelled') : page.locator(`#col-${status}`);
  await page.locator(`.card[data-task-id="${id}"]`).dragTo(target);
}

async function drags(tag) {
  const e = await newTask(`${tag} drag me along`);
  await card('pending', e).waitFor({timeout: LIVE});

  await drag(e, 'claimed');
  const ask = page.locator('#board-ask');
  await ask.waitFor({state: 'visible', timeout: LIVE});
  await page.locator('#board-ask-title', {hasText: `Assign #${e} to`}).waitFor();
  await page.selectOption('#board-ask-field', 'bob');
  await shot(`${tag}-drag-assign`);
  await ask.locator('button[value="ok"]').click();
  let t = await until(e, (x) => x.status === 'claimed', 'claimed');
  assert.equal(t.owner, 'bob');
  await card('claimed', e).waitFor({timeout: LIVE});

  // a question dismissed changes nothing
  await drag(e, 'completed');
  await ask.waitFor({state: 'visible', timeout: LIVE});
  await ask.locator('button[value="cancel"]').click();
  await ask.waitFor({state: 'hidden', timeout: LIVE});
  assert.equal((await task(e)).status, 'claimed');
  await card('claimed', e).waitFor({timeout: LIVE});

  await drag(e, 'in_progress');
  await until(e, (x) => x.status === 'in_progress', 'in progress');
  await card('in_progress', e).waitFor({timeout: LIVE});

  await drag(e, 'completed');
  await ask.waitFor({state: 'visible', timeout: LIVE});
  await page.fill('#board-ask-field', 'dragged to done');
  await ask.locator('button[value="ok"]').click();
  t = await until(e, (x) => x.status === 'completed', 'completed');
  assert.equal(t.result, 'dragged to done');
  await card('completed', e).waitFor({timeout: LIVE});

  // more moves: to failed (a reason), back to pending (retry), cancelled
  const f = await newTask(`${tag} drag me to failure`);
  await api('POST', `/api/tasks/${f}/assign`, {agent: 'ada'});
  await card('claimed', f).waitFor({timeout: LIVE});
  await drag(f, 'failed');
  await ask.waitFor({state: 'visible', timeout: LIVE});
  await page.fill('#board-ask-field', 'not today');
  await ask.locator('button[value="ok"]').click();
  t = await until(f, (x) => x.status === 'failed', 'failed');
  assert.equal(t.reason, 'not today');
  await card('failed', f).waitFor({timeout: LIVE});
  await drag(f, 'pending');
  await until(f, (x) => x.status === 'pending', 'pending (retried)');
  await card('pending', f).waitFor({timeout: LIVE});
  await drag(f, 'cancelled');
  await until(f, (x) => x.status === 'cancelled', 'cancelled');
  await card('cancelled', f).waitFor({state: 'attached', timeout: LIVE});
  await shot(`${tag}-drags`);
  assert.deepEqual(unexpectedErrors(), []);
}

test('drags: pending -> claimed (whom?) -> in progress -> completed (result?), and the rest', async () => {
  await drags('wide');
});

// A phone shows the first columns side by side; the rest of the board
// scrolls sideways, where the drawer's buttons are the way (tested above).
test('drags at a phone width, between the columns on screen', async () => {
  await page.setViewportSize(PHONE);
  try {
    const e = await newTask('phone drag me');
    await card('pending', e).waitFor({timeout: LIVE});
    await drag(e, 'claimed');
    const ask = page.locator('#board-ask');
    await ask.waitFor({state: 'visible', timeout: LIVE});
    await page.selectOption('#board-ask-field', 'ada');
    await ask.locator('button[value="ok"]').click();
    const t = await until(e, (x) => x.status === 'claimed', 'claimed');
    assert.equal(t.owner, 'ada');
    await card('claimed', e).waitFor({timeout: LIVE});
    await drag(e, 'pending');
    await until(e, (x) => x.status === 'pending' && x.owner === null, 'released');
    await card('pending', e).waitFor({timeout: LIVE});
    await shot('phone-drags');
    assert.deepEqual(unexpectedErrors(), []);
  } finally {
    await page.setViewportSize(DESKTOP);
  }
});

test('an illegal drag is refused with the library\'s message and the card stays', async () => {
  const done = Number(await page.locator('#col-completed .card').first().getAttribute('data-task-id'));
  assert.equal((await task(done)).status, 'completed');

  // completed -> in progress: the board refuses; its words are shown
  await drag(done, 'in_progress');
  const refusal = await api('POST', `/api/tasks/${done}/start`, {});
  assert.equal(refusal.status, 422, refusal.text);
  assert.equal(refusal.json.error, `task ${done} cannot go from completed to in_progress`);
  await page.locator('#board-msg .refusal', {hasText: refusal.json.error}).waitFor({timeout: LIVE});
  await page.locator('#board-msg', {hasText: `#${done} is completed: it moves no further.`}).waitFor();
  expectRefusals(1, /\/start$/);
  assert.equal((await task(done)).status, 'completed');
  await card('completed', done).waitFor({timeout: LIVE});
  await shot('drag-refused');

  // a task with an unmet dependency cannot be handed out
  const first = await newTask('comes first');
  const second = await newTask('waits for the first', {depends_on: [first]});
  await card('pending', second).waitFor({timeout: LIVE});
  await drag(second, 'claimed');
  const ask = page.locator('#board-ask');
  await ask.waitFor({state: 'visible', timeout: LIVE});
  await page.selectOption('#board-ask-field', 'ada');
  await ask.locator('button[value="ok"]').click();
  const blocked = await api('POST', `/api/tasks/${second}/assign`, {agent: 'ada'});
  assert.equal(blocked.json.error, `task ${second} is blocked by ${first}`);
  await page.locator('#board-msg .refusal', {hasText: blocked.json.error}).waitFor({timeout: LIVE});
  expectRefusals(1, /\/assign$/);
  const t = await task(second);
  assert.equal(t.status, 'pending');
  assert.equal(t.owner, null);
  await card('pending', second).waitFor({timeout: LIVE});

  // a move no action makes: the page says which moves there are
  await drag(done, 'claimed');
  await page.locator('#board-msg', {hasText: `Only a pending task can be assigned; #${done} is completed.`})
    .waitFor({timeout: LIVE});
  assert.equal((await task(done)).status, 'completed');
  await shot('drag-no-move');
  assert.deepEqual(unexpectedErrors(), []);
});
