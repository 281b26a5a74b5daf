// dashboard-layout.test.mjs -- the dashboard on a phone, from the
// keyboard, and for a big team, in Debian's headless Chromium through
// playwright-core, against a real `huddle serve` with an empty home,
// started by test-dashboard-layout.sh (env: HUDDLE, HUDDLE_HOME,
// HUDDLE_PORT, HUDDLE_SHOTS, HUDDLE_TMP, CHROMIUM). In order, sharing the
// server:
//   - a home without a team: the page says what to do first (New team,
//     `huddle up`, `huddle team create`) and its New team opens the dialog;
//   - a team without agents or tasks: each panel says how to add them;
//   - a team of 20 agents (`huddle up`) and 500 tasks (REST) in every
//     column: the page shows every count right while drawing at most a page
//     of cards per column, pages on with "Show more", and reports how long
//     it took until all counts, those cards and the agents were painted,
//     its longest task and where the time went (the page's performance
//     marks; reported, never asserted: speed is measured in bench/); its
//     room opens on its last 100 posts and loads earlier ones 100 at a
//     time;
//   - at 390x844 and 1280x800, empty and full: the page never scrolls
//     sideways (document.documentElement.scrollWidth <= innerWidth), every
//     panel lies inside the viewport's width, the board scrolls its columns
//     inside itself; a full desktop page does not scroll at all (its
//     columns do);
//   - the keyboard: skip link to the board, Tab order, a visible focus
//     ring, Enter opens a card, Tab stays in the drawer and in a modal
//     dialog, Escape closes them and gives focus back.
// Screenshots of each state go to HUDDLE_SHOTS.
import {test, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {BASE, PHONE, PORT, SHOTS, api, onConsoleError, openBrowser} from './browser.mjs';

// A bound on waits so a broken page fails instead of hanging; never a
// measure of speed.
const LIVE = 20000;
const WIDE = {width: 1280, height: 800};
const WIDTHS = [['phone', PHONE], ['desktop', WIDE]];
const PAGE = 50; // app.js's BOARD_PAGE
const STATUSES = ['pending', 'claimed', 'in_progress', 'completed', 'failed', 'cancelled'];

assert.ok(PORT && SHOTS && process.env.HUDDLE && process.env.HUDDLE_TMP,
  'run me through test-dashboard-layout.sh');

const browsers = [];
after(async () => {
  for (const b of browsers) await b.close();
});

// A page at a viewport, failing the test on any console error.
async function open(viewport, errors) {
  const b = await openBrowser(viewport);
  browsers.push(b);
  onConsoleError(b.page, (text, url) => errors.push(`${text} ${url}`));
  return b.page;
}

async function shot(page, name) {
  await page.screenshot({path: path.join(SHOTS, `${name}.png`)});
}

// The page does not scroll sideways, and each of these elements (when it
// is shown) lies inside the viewport's width: visible and not clipped.
async function fitsWidth(page, where, sels) {
  const r = await page.evaluate((sels) => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth,
    boxes: sels.map((s) => {
      const el = document.querySelector(s);
      if (!el) return {s, missing: true};
      const b = el.getBoundingClientRect();
      return {s, left: b.left, right: b.right, width: b.width, height: b.height,
        shown: getComputedStyle(el).visibility !== 'hidden' && b.width > 0 && b.height > 0};
    }),
  }), sels);
  assert.ok(r.scrollWidth <= r.innerWidth,
    `${where}: the page scrolls sideways: scrollWidth ${r.scrollWidth} > innerWidth ${r.innerWidth}`);
  for (const b of r.boxes) {
    assert.ok(!b.missing, `${where}: ${b.s} is missing`);
    assert.ok(b.shown, `${where}: ${b.s} is not shown: ${JSON.stringify(b)}`);
    assert.ok(b.left >= 0 && b.right <= r.innerWidth + 0.5,
      `${where}: ${b.s} is clipped (left ${b.left}, right ${b.right}, viewport ${r.innerWidth})`);
  }
}

const PANELS = ['.topbar', '#agents-panel', '#board-panel', '#board', '#ask-panel', '#exchange-panel',
  '#events-panel', '#room-panel', '#post-form'];

test('a home without a team says what to do first, at both widths', async () => {
  for (const [name, vp] of WIDTHS) {
    const errors = [];
    const page = await open(vp, errors);
    await page.goto(BASE + '/');
    const first = page.locator('#no-teams');
    await first.waitFor({state: 'visible', timeout: LIVE});
    const text = await first.textContent();
    for (const want of ['Start with a team', 'New team', 'huddle up examples/dev-team.json',
      'huddle team create']) {
      assert.ok(text.includes(want), `${name}: the first steps say ${want}: ${text}`);
    }
    assert.equal(await page.locator('#layout').isVisible(), false, 'no empty panels behind it');
    await fitsWidth(page, `empty home at ${name}`, ['.topbar', '#no-teams', '#no-teams-new']);
    await shot(page, `empty-home-${name}`);
    // its own New team button opens the dialog; Escape closes it and
    // focus returns to the button
    await page.locator('#no-teams-new').focus();
    await page.keyboard.press('Enter');
    await page.locator('#team-dialog').waitFor({state: 'visible', timeout: LIVE});
    await fitsWidth(page, `new team dialog at ${name}`, ['#team-dialog']);
    await page.keyboard.press('Escape');
    await page.locator('#team-dialog').waitFor({state: 'hidden', timeout: LIVE});
    assert.equal(await page.evaluate(() => document.activeElement.id), 'no-teams-new');
    assert.deepEqual(errors, []);
  }
});

test('a team without agents or tasks says how to add them, at both widths', async () => {
  const r = await api('POST', '/api/teams', {id: 'fresh', name: 'Fresh'});
  assert.equal(r.status, 201, r.text);
  for (const [name, vp] of WIDTHS) {
    const errors = [];
    const page = await open(vp, errors);
    await page.goto(BASE + '/teams/fresh');
    const agents = page.locator('#agents-empty');
    const board = page.locator('#board-empty');
    await agents.waitFor({state: 'visible', timeout: LIVE});
    await board.waitFor({state: 'visible', timeout: LIVE});
    assert.match(await agents.textContent(), /^No agents yet\. Add agent .*huddle agent add fresh coder --runtime scripted/);
    assert.match(await board.textContent(), /^No tasks yet\. .*huddle task create fresh "Write the docs"/);
    await fitsWidth(page, `empty team at ${name}`, [...PANELS, '#agents-empty', '#board-empty']);
    await shot(page, `empty-team-${name}`);
    // the first task takes the board's empty state away
    if (name === 'desktop') {
      await page.fill('#task-subject', 'The first task');
      await page.keyboard.press('Enter');
      await board.waitFor({state: 'hidden', timeout: LIVE});
      await page.locator('#col-pending .card', {hasText: 'The first task'}).waitFor({timeout: LIVE});
      assert.equal(await agents.isVisible(), true, 'still no agents');
    }
    assert.deepEqual(errors, []);
  }
});

// ---- 20 agents, 500 tasks -------------------------------------------------

// within the 200 characters a subject may have
const LONG_SUBJECT = 'A subject without a single break: ' + 'x'.repeat(80) +
  ' https://example.com/' + 'segment-'.repeat(6) + 'end';
const expected = {};

async function post(p, body) {
  const r = await api('POST', p, body);
  assert.ok(r.status === 200 || r.status === 201, `${p}: ${r.status} ${r.text}`);
  return r.json;
}

// Run f over items, eight requests at a time.
async function inBatches(items, f) {
  for (let i = 0; i < items.length; i += 8) await Promise.all(items.slice(i, i + 8).map(f));
}

test('a team of 20 agents (huddle up) and 500 tasks in every column', {timeout: 300000}, async () => {
  const file = path.join(process.env.HUDDLE_TMP, 'many.json');
  const agents = Array.from({length: 20}, (_, i) => ({
    id: `agent-${String(i + 1).padStart(2, '0')}`, role: i ? 'member' : 'team lead', leader: i === 0,
    runtime: 'scripted', runtime_config: {default: 'On it.'}}));
  fs.writeFileSync(file, JSON.stringify({team: 'many', name: 'Many', agents}));
  execFileSync(process.env.HUDDLE, ['up', file], {env: process.env, stdio: 'pipe'});
  const ids = [];
  for (let i = 0; i < 500; i += 50) {
    const made = await Promise.all(Array.from({length: 50}, (_, k) => post('/api/teams/many/tasks', {
      subject: i + k === 0 ? LONG_SUBJECT : `Task number ${i + k + 1}`, priority: i + k === 0 ? 5 : (i + k) % 4})));
    ids.push(...made.map((m) => m.task.id));
  }
  // i % 10: 0-3 pending, 4 claimed, 5 in progress, 6-7 completed,
  // 8 failed, 9 cancelled (the long subject, i = 0, stays pending, first
  // of the column by its priority)
  const want = (i) => ['pending', 'pending', 'pending', 'pending', 'claimed', 'in_progress',
    'completed', 'completed', 'failed', 'cancelled'][i % 10];
  const idx = ids.map((_, i) => i);
  await inBatches(idx.filter((i) => !['pending', 'cancelled'].includes(want(i))), (i) =>
    post(`/api/tasks/${ids[i]}/assign`, {agent: agents[i % 20].id}));
  await inBatches(idx.filter((i) => ['in_progress', 'completed', 'failed'].includes(want(i))), (i) =>
    post(`/api/tasks/${ids[i]}/start`, {}));
  await inBatches(idx.filter((i) => want(i) === 'completed'), (i) =>
    post(`/api/tasks/${ids[i]}/complete`, {result: `done ${i}`}));
  await inBatches(idx.filter((i) => want(i) === 'failed'), (i) =>
    post(`/api/tasks/${ids[i]}/fail`, {reason: `failed ${i}`}));
  await inBatches(idx.filter((i) => want(i) === 'cancelled'), (i) => post(`/api/tasks/${ids[i]}/cancel`, {}));
  // the REST API is the truth the page must show
  const r = await api('GET', '/api/teams/many/tasks');
  assert.equal(r.status, 200);
  assert.equal(r.json.tasks.length, 500);
  for (const s of STATUSES) expected[s] = r.json.tasks.filter((t) => t.status === s).length;
  assert.deepEqual(expected, {pending: 200, claimed: 50, in_progress: 50, completed: 100, failed: 50,
    cancelled: 50});
  const a = await api('GET', '/api/teams/many/agents');
  assert.equal(a.json.agents.length, 20);
});

// Each column's count as the page shows it, and the cards it drew.
function boardOnPage(page) {
  return page.evaluate((statuses) => Object.fromEntries(statuses.map((s) => {
    const col = document.getElementById('col-' + s);
    return [s, {count: Number(col.querySelector('.count').textContent),
      cards: col.querySelectorAll('.cards > .card').length}];
  })), STATUSES);
}

test('the big team loads with every count right and a page of cards per column', {timeout: 120000}, async (t) => {
  for (const [name, vp] of WIDTHS) {
    const errors = [];
    const b = await openBrowser(vp);
    browsers.push(b);
    const page = b.page;
    onConsoleError(page, (text, url) => errors.push(`${text} ${url}`));
    // the page's own long tasks, from its first script on
    await page.addInitScript(() => {
      window.__longTasks = [];
      try {
        new PerformanceObserver((list) => {
          for (const e of list.getEntries()) window.__longTasks.push(e.duration);
        }).observe({type: 'longtask', buffered: true});
      } catch (e) { /* no longtask timing: nothing to report */ }
    });
    await page.goto(BASE + '/teams/many');
    // From the navigation's start until every count, every column's first
    // page of cards and all 20 agents are in the page and that frame has
    // been laid out and painted: checked at each frame; the first frame
    // that has them all posts a task, which runs once that frame's
    // rendering is done, and the time is taken there.
    const shownAt = await (await page.waitForFunction(([want, pageSize]) => {
      if (window.__shownAt) return window.__shownAt;
      const cols = Object.entries(want).every(([s, n]) => {
        const col = document.querySelector(`#col-${s}`);
        return col.querySelector('.count').textContent === String(n) &&
          col.querySelectorAll('.cards > .card').length === Math.min(n, pageSize);
      });
      if (cols && document.querySelectorAll('#agents .agent').length === 20 && !window.__shown) {
        window.__shown = true;
        setTimeout(() => { window.__shownAt = performance.now(); }, 0);
      }
      return false;
    }, [expected, PAGE], {timeout: LIVE, polling: 'raf'})).jsonValue();
    await page.waitForTimeout(500); // let the stream's first answers land
    const longTasks = await page.evaluate(() => window.__longTasks);
    const longest = longTasks.length ? Math.max(...longTasks) : 0;
    // where the time went: the page's own marks (boot.js (4)), when its
    // document was parsed and its scripts had run, and when its board's
    // answer came
    const when = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      const marks = Object.fromEntries(performance.getEntriesByType('mark')
        .filter((m) => m.name.startsWith('huddle:')).map((m) => [m.name.slice(7), Math.round(m.startTime)]));
      const tasks = performance.getEntriesByType('resource').find((e) => /\/api\/teams\/many\/tasks$/.test(e.name));
      return `scripts run ${nav ? Math.round(nav.domContentLoadedEventEnd) : '-'}, tasks answered ` +
        `${tasks ? Math.round(tasks.responseEnd) : '-'}, drawn: agents ${marks.agents ?? '-'}, board ` +
        `${marks.board ?? '-'}, room ${marks.room ?? '-'}; load event ${nav ? Math.round(nav.loadEventEnd) : '-'}`;
    });
    const msg = `${name} ${vp.width}x${vp.height}: 20 agents and 500 tasks shown (and painted) ` +
      `${Math.round(shownAt)} ms after navigation; ${longTasks.length} long tasks, the longest ` +
      `${Math.round(longest)} ms; ${when} ms (reported, not asserted)`;
    t.diagnostic(msg);
    console.log(`# ${msg}`);

    const shown = await boardOnPage(page);
    let cards = 0;
    for (const s of STATUSES) {
      assert.equal(shown[s].count, expected[s], `${name}: the ${s} count`);
      assert.equal(shown[s].cards, Math.min(PAGE, expected[s]), `${name}: the ${s} cards drawn`);
      cards += shown[s].cards;
      const more = page.locator(`#col-${s} .col-more`);
      if (expected[s] > PAGE) {
        assert.equal(await more.textContent(),
          `Show ${Math.min(PAGE, expected[s] - PAGE)} more (${expected[s] - PAGE} not shown)`);
      } else assert.equal(await more.isVisible(), false, `${name}: ${s} has no Show more`);
    }
    assert.ok(cards < 500, `${name}: ${cards} cards drawn, not all 500`);
    // the long subject wraps inside its card
    const long = page.locator('#col-pending .card', {hasText: 'A subject without a single break'});
    await long.waitFor({timeout: LIVE});
    const [cardBox, colBox] = await Promise.all([long.boundingBox(), page.locator('#col-pending').boundingBox()]);
    assert.ok(cardBox.x + cardBox.width <= colBox.x + colBox.width + 0.5, `${name}: the long card fits its column`);

    await fitsWidth(page, `the big team at ${name}`, PANELS);
    await shot(page, `many-${name}`);

    if (name === 'phone') {
      // the board scrolls its columns inside itself, a column at a time
      const strip = await page.evaluate(() => {
        const el = document.getElementById('board');
        const cs = getComputedStyle(el);
        return {overflowX: cs.overflowX, snap: cs.scrollSnapType, scrollWidth: el.scrollWidth,
          clientWidth: el.clientWidth};
      });
      assert.equal(strip.overflowX, 'auto');
      assert.match(strip.snap, /^x mandatory/);
      assert.ok(strip.scrollWidth > strip.clientWidth, `the columns scroll: ${JSON.stringify(strip)}`);
      await page.locator('#col-failed').scrollIntoViewIfNeeded();
      await page.evaluate(() => {
        const el = document.getElementById('board');
        el.scrollLeft = el.scrollWidth;
      });
      await page.waitForFunction(() => {
        const r = document.getElementById('col-failed').getBoundingClientRect();
        return r.left >= 0 && r.right <= innerWidth;
      }, null, {timeout: LIVE});
      await fitsWidth(page, 'the board scrolled to Failed at phone', ['#col-failed', '#board']);
      await shot(page, 'many-phone-board-scrolled');
    } else {
      // a desktop page does not scroll at all: its columns do
      const tall = await page.evaluate(() => [document.documentElement.scrollHeight, innerHeight]);
      assert.ok(tall[0] <= tall[1], `the desktop page scrolls: scrollHeight ${tall[0]} > innerHeight ${tall[1]}`);
      // Show more draws 50 more, the count stays the column's, and focus
      // goes to the first new card
      await page.locator('#col-pending .col-more').click();
      await page.waitForFunction(() => document.querySelectorAll('#col-pending .cards > .card').length === 100,
        null, {timeout: LIVE});
      const after = await boardOnPage(page);
      assert.equal(after.pending.count, 200);
      assert.equal(await page.locator('#col-pending .col-more').textContent(), 'Show 50 more (100 not shown)');
      const focused = await page.evaluate(() => {
        const cards = [...document.querySelectorAll('#col-pending .cards > .card')];
        return cards.indexOf(document.activeElement);
      });
      assert.equal(focused, 50, 'focus on the first card drawn by Show more');
      // a new task still shows at once, and the page keeps its 100
      await post('/api/teams/many/tasks', {subject: 'One more, made while the page is open', priority: 9});
      await page.locator('#col-pending .count', {hasText: '201'}).waitFor({timeout: LIVE});
      await page.locator('#col-pending .card', {hasText: 'One more, made while'}).waitFor({timeout: LIVE});
      assert.equal(await page.locator('#col-pending .cards > .card').count(), 100);
      expected.pending = 201;

      // the room (every move above posted a line in it) opens on its last
      // 100 posts; the note above them counts the rest and loads 100 more
      const head = (await api('GET', '/api/events?team=many&kind=team_chat_post&limit=1')).json.events[0].data.seq;
      assert.ok(head > 300, `the room has ${head} posts`);
      const posts = () => page.locator('#room-log .post[data-seq]').count();
      const note = page.locator('#room-log .post.earlier');
      await note.waitFor({timeout: LIVE});
      const first = async () => Number(await page.locator('#room-log .post[data-seq]').first().getAttribute('data-seq'));
      let shownPosts = await posts();
      assert.ok(shownPosts >= 100 && shownPosts <= 110, `${shownPosts} posts drawn at first`);
      assert.equal(await note.textContent(),
        `${(await first()) - 1} earlier posts are not shown. Show 100 more, or huddle chat read many for all.`);
      await note.locator('button').click();
      await page.waitForFunction((n) => document.querySelectorAll('#room-log .post[data-seq]').length === n,
        shownPosts + 100, {timeout: LIVE});
      shownPosts += 100;
      const seqs = await page.locator('#room-log .post[data-seq]').evaluateAll((els) => els.map((e) => Number(e.dataset.seq)));
      assert.deepEqual(seqs, Array.from({length: seqs.length}, (_, i) => seqs[0] + i), 'in order, none twice');
      assert.match(await note.textContent(), new RegExp(`^${seqs[0] - 1} earlier posts are not shown`));
    }
    assert.deepEqual(errors, []);
  }
});

// ---- the keyboard ---------------------------------------------------------

const active = (page) => page.evaluate(() => {
  const el = document.activeElement;
  return {id: el.id, tag: el.tagName.toLowerCase(), text: (el.textContent || '').trim().slice(0, 40),
    task: el.dataset.taskId || null, cls: el.className,
    inDrawer: !!el.closest('#task-drawer'), inDialog: !!el.closest('dialog[open]')};
});

// WCAG's contrast ratio of two "rgb(r, g, b)" colours.
function contrast(a, b) {
  const lum = (c) => {
    const [r, g, bl] = c.match(/[\d.]+/g).slice(0, 3).map((x) => {
      const v = Number(x) / 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

test('the keyboard reaches everything in order, sees its focus, and opens and closes cards and dialogs',
  {timeout: 120000}, async () => {
    const errors = [];
    const page = await open(WIDE, errors);
    await page.goto(BASE + '/teams/many');
    await page.locator('#col-pending .count', {hasText: String(expected.pending)}).waitFor({timeout: LIVE});
    await page.locator('#conn[data-state="live"]').waitFor({timeout: LIVE});

    // from the top: the skip links, the team switcher, New team
    const order = [];
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('Tab');
      const a = await active(page);
      order.push(a.id || a.text);
    }
    assert.deepEqual(order, ['Skip to the board', 'Skip to the room', 'team-select', 'new-team']);

    // New team opens a modal dialog: Tab stays in it, Escape closes it,
    // focus comes back to the button
    await page.keyboard.press('Enter');
    await page.locator('#team-dialog').waitFor({state: 'visible', timeout: LIVE});
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press(i % 4 === 3 ? 'Shift+Tab' : 'Tab');
      assert.ok((await active(page)).inDialog, `Tab ${i + 1} left the dialog: ${JSON.stringify(await active(page))}`);
    }
    await page.keyboard.press('Escape');
    await page.locator('#team-dialog').waitFor({state: 'hidden', timeout: LIVE});
    assert.equal((await active(page)).id, 'new-team');

    // the skip link to the board: shown when focused, then the board's form
    // and its first card
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    assert.equal((await active(page)).text, 'Skip to the board');
    const skip = await page.evaluate(() => {
      const r = document.activeElement.getBoundingClientRect();
      return {top: r.top, bottom: r.bottom};
    });
    assert.ok(skip.top >= 0 && skip.bottom > skip.top, `the skip link shows when focused: ${JSON.stringify(skip)}`);
    await page.keyboard.press('Enter');
    assert.equal((await active(page)).id, 'board-h');
    const inBoard = [];
    for (let i = 0; i < 5; i++) {
      await page.keyboard.press('Tab');
      const a = await active(page);
      inBoard.push(a.task ? 'card' : a.id || a.text);
    }
    assert.deepEqual(inBoard, ['task-subject', 'task-priority', 'task-deps', 'Add task', 'card']);
    const first = await active(page);
    assert.equal(first.task, await page.locator('#col-pending .cards > .card').first().getAttribute('data-task-id'));

    // its focus ring is drawn and stands out from the card (3:1 at least)
    const ring = await page.evaluate(() => {
      const el = document.activeElement;
      const cs = getComputedStyle(el);
      return {visible: el.matches(':focus-visible'), style: cs.outlineStyle, width: parseFloat(cs.outlineWidth),
        color: cs.outlineColor, bg: cs.backgroundColor};
    });
    assert.ok(ring.visible && ring.style === 'solid' && ring.width >= 2, `a visible ring: ${JSON.stringify(ring)}`);
    const ratio = contrast(ring.color, ring.bg);
    assert.ok(ratio >= 3, `the ring's contrast against the card is ${ratio.toFixed(2)}:1`);
    await shot(page, 'keyboard-card-focused-desktop');

    // Enter opens the card's drawer; Tab stays in it; Escape gives focus back
    await page.keyboard.press('Enter');
    await page.locator('#task-drawer').waitFor({state: 'visible', timeout: LIVE});
    await page.locator('#drawer-title', {hasText: `#${first.task}`}).waitFor({timeout: LIVE});
    assert.equal((await active(page)).id, 'drawer-title');
    await page.keyboard.press('Shift+Tab');
    assert.ok((await active(page)).inDrawer, 'Shift+Tab from the title stays in the drawer');
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press('Tab');
      assert.ok((await active(page)).inDrawer, `Tab ${i + 1} left the drawer: ${JSON.stringify(await active(page))}`);
    }
    await shot(page, 'keyboard-drawer-desktop');
    await page.keyboard.press('Escape');
    await page.locator('#task-drawer').waitFor({state: 'hidden', timeout: LIVE});
    const back = await active(page);
    assert.equal(back.task, first.task, 'focus returns to the card');

    // past a column's last drawn card: its Show more
    await page.locator('#col-pending .cards > .card').last().focus();
    await page.keyboard.press('Tab');
    const more = await active(page);
    assert.match(more.cls, /col-more/);
    assert.match(more.text, /^Show 50 more/);
    assert.deepEqual(errors, []);
  });
