// routines.js -- the team's routines on the dashboard: a list with each
// routine's schedule, agent, task, state and next fire time. Loaded after
// app.js, whose window.huddle it uses.
//
//  (1) The list is GET /api/teams/:team/routines, read when a team is
//      selected and again when the stream carries a routine_* event (a
//      fire is routine_fired, app.js's KINDS); answers for a team no
//      longer shown are dropped.
//  (2) A next fire time is a <time> whose datetime is the instant (UTC,
//      ISO 8601) and whose text is the browser's local date and time; a
//      disabled routine says "disabled", never a stale time.
//  (3) Routines are managed from the CLI and REST (huddle routine ...);
//      the panel reads, it does not write. Nodes come from h() only
//      (createElement and text).
//  (4) A team's list is asked for when the page is next idle (at most a
//      second after the team is selected), not at once: the board and the
//      agents, above it, load first.
'use strict';

(() => {
  const hd = window.huddle;
  if (!hd) return;
  const {api, h, state, enc} = hd;
  const $ = (sel) => document.querySelector(sel);
  let shown = 0; // the generation of the last request

  function every(s) {
    if (s % 86400 === 0) return `every ${s / 86400}d`;
    if (s % 3600 === 0) return `every ${s / 3600}h`;
    if (s % 60 === 0) return `every ${s / 60}m`;
    return `every ${s}s`;
  }

  function when(ms) {
    const d = new Date(ms);
    return h('time', {datetime: d.toISOString(), title: d.toUTCString()},
      d.toLocaleString([], {dateStyle: 'medium', timeStyle: 'short'}));
  }

  function row(r) {
    const sched = r.cron ? h('span', {}, h('code', {}, r.cron), ` ${r.tz}`) : every(r.every_s);
    const next = !r.enabled ? h('span', {class: 'routine-off'}, 'disabled')
      : r.next_fire_at ? when(r.next_fire_at) : h('span', {}, 'never');
    return h('tr', {class: 'routine', 'data-routine': r.name},
      h('th', {scope: 'row'}, r.name),
      h('td', {class: 'routine-agent'}, r.agent),
      h('td', {class: 'routine-schedule'}, sched),
      h('td', {class: 'routine-task'}, r.title),
      h('td', {class: 'routine-next'}, next),
      h('td', {class: 'routine-last'}, r.last_task_id ? `task #${r.last_task_id}` : '—'));
  }

  async function load() {
    const team = state.team;
    const mine = ++shown;
    if (!team) return;
    let r;
    try {
      r = await api('GET', `/api/teams/${enc(team)}/routines`);
    } catch (e) {
      if (mine === shown) console.warn('huddle:', e.message);
      return;
    }
    if (mine !== shown || team !== state.team) return; // (1)
    const list = r.routines || [];
    $('#routines tbody').replaceChildren(...list.map(row));
    $('#routines').hidden = list.length === 0;
    $('#routines-empty').hidden = list.length !== 0;
  }

  // (4) a team's first list waits until the page is idle
  const idle = (f) => (window.requestIdleCallback ? requestIdleCallback(() => f(), {timeout: 1000})
    : setTimeout(f, 100));
  document.addEventListener('huddle:team', () => idle(load));
  document.addEventListener('huddle:event', (e) => {
    const ev = e.detail;
    if (!ev || !ev.kind) return;
    if (ev.kind.startsWith('routine_')) load();
  });
  if (state.team) idle(load);
})();
