// dashboard-verify.test.mjs -- a task's verification in the task drawer
// (web/verify.js), in Debian's headless Chromium through playwright-core,
// against a real `huddle serve` whose own verifier runs the checks,
// started by test-dashboard-verify.sh (team vd; its header says what each
// task went through before the browser opens). The REST API is the
// truth every check compares with. Checked: #1's failing gate (its exit,
// its output as text in a scrollable box, huddle's rejection and its
// reasons); #2's critic that never answered (the failed run's error, then
// Verify again queues it again: a second attempt, live in the drawer);
// #3 approved from the drawer (completed, in its column); #4 rejected
// from the drawer, first without reasons (the server's message in the
// drawer's message line), then with them (in progress, the reasons a
// comment); #5's throwaway critic named while it runs; the section
// reached by Tab inside the drawer; and at 390 px nothing scrolls
// sideways.
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import path from 'node:path';

import {PORT, SHOTS, DESKTOP, PHONE, api, dashboardPages} from './browser.mjs';

const LIVE = 60000; // a bound on waits, never a measure of speed
assert.ok(PORT && SHOTS, 'run me through test-dashboard-verify.sh');

const consoleErrors = [];
const open = dashboardPages({
  team: 'vd', timeout: LIVE, onError: (text, url) => consoleErrors.push({text, url}),
});

async function openCard(page, id) {
  await page.locator(`.card[data-task-id="${id}"]`).click();
  await page.locator('#task-drawer').waitFor({state: 'visible', timeout: LIVE});
  await page.locator('#drawer-title').filter({hasText: `#${id}`}).waitFor({timeout: LIVE});
  await page.locator('#drawer-verify').waitFor({state: 'visible', timeout: LIVE});
}

const task = async (id) => (await api('GET', `/api/tasks/${id}`)).json.task;

// Wait until the REST API says the task is so.
async function until(page, id, pred, what) {
  let t;
  for (let i = 0; i < LIVE / 100; i++) {
    t = await task(id);
    if (pred(t)) return t;
    await page.waitForTimeout(100);
  }
  assert.fail(`${what}: task ${id} is ${JSON.stringify(t)}`);
}

const dd = (page, key) => page.locator(`#drawer-verify dd[data-key="${key}"]`);
const text = async (loc) => (await loc.textContent()).replace(/\s+/g, ' ').trim();

test('verify.js is served and never builds markup from strings', async () => {
  for (const p of ['/assets/verify.js', '/assets/verify.css']) {
    const r = await api('GET', p);
    assert.equal(r.status, 200, p);
  }
  const js = await api('GET', '/assets/verify.js');
  assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
  assert.doesNotMatch(js.text, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
});

test('a failing gate: its exit, its output as text, huddle\'s rejection', async () => {
  const page = await open(DESKTOP);
  const t = await task(1);
  assert.equal(t.status, 'in_progress');
  assert.equal(t.verify.gate_exit, 3);
  assert.match(t.verify.gate_output, /checking the parser/);
  assert.match(t.verify.gate_output, /FAIL: 2 of 9 tests/);
  assert.deepEqual([t.verify.verdict, t.verify.verdict_by], ['reject', 'huddle']);

  await openCard(page, 1);
  const out = page.locator('#drawer-verify pre#verify-output');
  assert.equal(await out.textContent(), t.verify.gate_output, 'the whole output, as the API has it');
  assert.equal(await out.evaluate((e) => e.children.length), 0, 'the output is text, not markup');
  assert.ok(['auto', 'scroll'].includes(await out.evaluate((e) => getComputedStyle(e).overflowY)),
    'the output scrolls in its own box');
  assert.equal(await out.getAttribute('tabindex'), '0', 'the output can be scrolled from the keyboard');
  assert.equal(await page.getByLabel('Gate output').getAttribute('id'), 'verify-output', 'the output is labelled');
  assert.equal(await text(dd(page, 'gate')),
    `${t.verify.gate} in the owner’s workdir, within ${t.verify.gate_timeout_s} s`);
  assert.equal(await text(dd(page, 'critic')), `sleeper, within ${t.verify.critic_timeout_s} s`);
  assert.equal(await text(dd(page, 'gate_exit')), '3 (failed)');
  assert.equal(await text(dd(page, 'verdict')),
    `Rejected by huddle: ${t.verify.reasons}`.replace(/\s+/g, ' ').trim());
  assert.match(await text(dd(page, 'state')), /^idle \(1 attempt\)$/);
  assert.equal(await dd(page, 'error').count(), 0, 'no error: the gate ran');
  // in progress again: no verdict to give, nothing to verify again
  assert.ok(await page.locator('#verify-verdict-form').isHidden());
  assert.ok(await page.locator('#verify-again-form').isHidden());
  await page.locator('#task-drawer').screenshot({path: path.join(SHOTS, 'failing-gate.png')});
  await page.close();
});

test('a critic that never answers: the error, then Verify again queues it again', async () => {
  const page = await open(DESKTOP);
  const t = await task(2);
  assert.deepEqual([t.status, t.verify.state, t.verify.attempts], ['verifying', 'failed', 1]);
  assert.match(t.verify.error, /critic sleeper's turn failed/);

  await openCard(page, 2);
  assert.equal(await text(dd(page, 'error')), t.verify.error.replace(/\s+/g, ' ').trim());
  assert.equal(await text(dd(page, 'gate_exit')), '0 (passed)');
  assert.equal(await page.locator('#verify-output').textContent(), 'all good\n');
  assert.match(await text(dd(page, 'state')), /^failed: .* \(1 attempt\)$/);
  assert.equal(await page.locator('#drawer-verify').getAttribute('data-state'), 'failed');
  assert.ok(await page.locator('#verify-again').isVisible());
  assert.ok(await page.locator('#verify-approve').isVisible(), 'a verifying task takes a verdict');
  await page.locator('#task-drawer').screenshot({path: path.join(SHOTS, 'failed-run.png')});

  const queuedOf = async () => (await api('GET', '/api/events?team=vd&task=2&limit=200')).json.events
    .filter((e) => e.kind === 'verify_queued');
  const since = (await queuedOf()).length;
  await page.locator('#verify-again').click();
  await until(page, 2, (x) => x.verify.attempts === 2, 'a second attempt after Verify again');
  const queued = await queuedOf();
  assert.equal(queued.length, since + 1, 'one more verify_queued');
  assert.equal(queued[queued.length - 1].data.retry, true, 'queued again, as a retry by the user');
  // live: the drawer follows the new attempt without a reload
  await dd(page, 'state').filter({hasText: '2 attempts'}).waitFor({timeout: LIVE});
  assert.equal(await page.locator('#drawer-msg').textContent(), '');
  await page.close();
});

test('a verifying task approved from the drawer is completed', async () => {
  const page = await open(DESKTOP);
  await openCard(page, 3);
  assert.equal(await text(dd(page, 'gate')), 'None: the critic alone decides.');
  assert.equal(await page.locator('#verify-output').isHidden(), true, 'no gate, no output');
  assert.equal(await page.locator('#col-verifying .card[data-task-id="3"]').count(), 1);
  await page.locator('#verify-approve').click();
  const t = await until(page, 3, (x) => x.status === 'completed', 'approved from the drawer');
  assert.deepEqual([t.verify.verdict, t.verify.verdict_by], ['approve', 'user']);
  await page.locator('#col-completed .card[data-task-id="3"]').waitFor({timeout: LIVE});
  await dd(page, 'verdict').filter({hasText: 'Approved by you'}).waitFor({timeout: LIVE});
  await page.locator('#verify-verdict-form').waitFor({state: 'hidden', timeout: LIVE});
  assert.ok(await page.locator('#verify-again-form').isHidden());
  await page.locator('#task-drawer').screenshot({path: path.join(SHOTS, 'approved.png')});
  await page.close();
});

test('a rejection from the drawer: without reasons refused, with them back in progress', async () => {
  const page = await open(DESKTOP);
  await openCard(page, 4);
  // the keyboard: from the drawer's title, Tab reaches the reasons, then
  // Approve, Reject and Verify again, all inside the drawer
  await page.locator('#drawer-title').focus();
  const seen = [];
  for (let i = 0; i < 20 && !seen.includes('verify-again'); i++) {
    await page.keyboard.press('Tab');
    const at = await page.evaluate(() => ({id: document.activeElement.id,
      inside: !!document.activeElement.closest('#task-drawer')}));
    assert.ok(at.inside, `Tab left the drawer for ${at.id}`);
    seen.push(at.id);
  }
  const order = ['verify-output', 'verify-reasons', 'verify-approve', 'verify-reject', 'verify-again'];
  assert.deepEqual(seen.filter((x) => order.includes(x)), order, `Tab went through ${seen.join(', ')}`);
  assert.equal(await page.getByLabel('Your verdict: reasons').getAttribute('id'), 'verify-reasons');

  // no reasons: the server's own message, the task untouched
  const refusal = await api('POST', '/api/tasks/4/verdict', {verdict: 'reject'});
  assert.equal(refusal.status, 400);
  await page.locator('#verify-reject').click();
  await page.locator('#drawer-msg').filter({hasText: refusal.json.error}).waitFor({timeout: LIVE});
  assert.equal(await page.locator('#drawer-msg').textContent(), refusal.json.error);
  assert.equal((await task(4)).status, 'verifying');
  const refused = consoleErrors.filter((e) => /\/api\/tasks\/4\/verdict/.test(e.url) && /status of 400/.test(e.text));
  assert.equal(refused.length, 1, `one refusal in the console: ${JSON.stringify(consoleErrors)}`);
  refused[0].expected = true;
  await page.locator('#task-drawer').screenshot({path: path.join(SHOTS, 'reject-refused.png')});

  // with reasons (markup in them stays text)
  const why = 'blank lines are dropped; keep <b>them</b>';
  await page.fill('#verify-reasons', why);
  await page.locator('#verify-reject').click();
  const t = await until(page, 4, (x) => x.status === 'in_progress', 'rejected from the drawer');
  assert.deepEqual([t.verify.verdict, t.verify.verdict_by, t.verify.reasons], ['reject', 'user', why]);
  const c = t.comments[t.comments.length - 1];
  assert.deepEqual([c.author, c.body], ['user', why], 'the reasons are a comment');
  await dd(page, 'verdict').filter({hasText: `Rejected by you: ${why}`}).waitFor({timeout: LIVE});
  await page.locator('#drawer-comments .comment-body', {hasText: why}).waitFor({timeout: LIVE});
  await page.locator('#col-in_progress .card[data-task-id="4"]').waitFor({timeout: LIVE});
  assert.equal(await page.locator('#task-drawer b').count(), 0, 'no markup from the reasons');
  assert.equal(await page.locator('#drawer-msg').textContent(), '', 'the refusal is gone');
  assert.equal(await page.locator('#verify-reasons').inputValue(), '', 'the form is cleared');
  await page.locator('#verify-verdict-form').waitFor({state: 'hidden', timeout: LIVE});
  await page.close();
});

test('a critic runtime: a fresh agent per check, this run\'s named while it runs', async () => {
  const page = await open(DESKTOP);
  // its owner completes it (the CLI acts as a member; REST as the user)
  execFileSync(process.env.HUDDLE, ['task', 'complete', '5', '--as', 'coder', '-r', 'ready for fresh eyes']);
  await openCard(page, 5);
  await dd(page, 'critic').filter({hasText: 'critic-5-1'}).waitFor({timeout: LIVE});
  assert.equal(await text(dd(page, 'critic')),
    'a fresh exec agent per check, within 20 s; this run’s: critic-5-1');
  assert.equal((await task(5)).verify.run_critic, 'critic-5-1');
  await page.locator('#task-drawer').screenshot({path: path.join(SHOTS, 'fresh-critic.png')});
  // it never answers: the run fails, the throwaway is gone, live
  await page.locator('#drawer-verify[data-state="failed"]').waitFor({timeout: LIVE});
  assert.equal(await text(dd(page, 'critic')), 'a fresh exec agent per check, within 20 s');
  const t = await task(5);
  assert.equal(t.verify.run_critic, null);
  assert.equal(await text(dd(page, 'error')), t.verify.error.replace(/\s+/g, ' ').trim());
  await page.close();
});

test('at 390 px the section does not scroll sideways', async () => {
  const page = await open(PHONE);
  await openCard(page, 1);
  const sec = await page.locator('#drawer-verify').evaluate((e) => ({sw: e.scrollWidth, cw: e.clientWidth}));
  assert.ok(sec.sw <= sec.cw, `the section is ${sec.sw}px wide in ${sec.cw}px`);
  const body = await page.locator('#task-drawer .drawer-body').evaluate((e) => e.scrollWidth - e.clientWidth);
  assert.ok(body <= 0, `the drawer scrolls sideways by ${body}px`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
  for (const sel of ['#verify-output', '#verify-facts']) {
    const box = await page.locator(sel).boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= PHONE.width, `${sel} fits the screen`);
  }
  await page.locator('#task-drawer').screenshot({path: path.join(SHOTS, 'phone.png')});
  // a verifying task's form too
  await page.locator('#task-drawer .drawer-close').click();
  await openCard(page, 2);
  await page.locator('#verify-verdict-form').waitFor({timeout: LIVE});
  const form = await page.locator('#verify-verdict-form').boundingBox();
  assert.ok(form.x + form.width <= PHONE.width, 'the verdict form fits the screen');
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
  await page.locator('#task-drawer').screenshot({path: path.join(SHOTS, 'phone-verifying.png')});
  assert.deepEqual(consoleErrors.filter((e) => !e.expected), []);
  await page.close();
});
