// memory.js -- the Memory panel: search the team's memory and save a fact
// (docs/memory.md). Loaded after app.js, whose window.huddle it uses.
//
//  (1) The page acts as the user, so it sees what the user may read: the
//      team's facts and the global ones, never an agent's private ones
//      (the server decides: GET /api/teams/:team/memory/search and
//      /memory act as whoever the request proves, here nobody).
//  (2) An empty search box lists the newest facts; words search them,
//      best match first, as typed (plain words: the server never reads
//      them as search syntax). A search is sent a moment after typing
//      stops, and an answer that comes back after a newer one was asked
//      for is dropped, so the list is always the last query's.
//  (3) Saving goes through POST /api/teams/:team/memory; a refusal (a
//      secret-shaped text, a blank one) keeps what was typed and shows the
//      server's reason under the form, so bad input loses nothing.
//  (4) Nodes come from h() only (createElement and text nodes); a fact's
//      text is never parsed as HTML.
//  (5) Choosing another team empties the box and lists that team's.
//  (6) That first list is asked for when the page is next idle (at most a
//      second later), not at once: a team's page draws its board and
//      agents first.
'use strict';

(() => {
  const hd = window.huddle;
  if (!hd) return;
  const {api, h, state, enc, say} = hd;
  const SHOW = 20; // facts listed at once
  const TYPE_PAUSE = 250; // ms after the last key before searching

  const $ = (sel) => document.querySelector(sel);
  const list = $('#memory-list');
  const empty = $('#memory-empty');
  const q = $('#memory-q');
  let asked = 0; // (2): the number of the last query sent
  let timer = null;

  function factItem(f) {
    const when = hd.timeEl(f.created_at);
    return h('li', {class: 'fact', 'data-fact-id': f.id, 'data-scope': f.scope},
      h('p', {class: 'fact-text'}, f.text),
      h('p', {class: 'fact-meta'},
        h('span', {class: 'fact-scope'}, f.scope === 'global' ? 'global' : 'team'),
        ' #', String(f.id), ' · ', f.source.agent === 'user' ? 'you' : f.source.agent, ' · ', when,
        f.tags.map((t) => h('span', {class: 'fact-tag'}, t)),
        f.expires_at ? [' · expires ', hd.timeEl(f.expires_at)] : null));
  }

  async function load() {
    const team = state.team;
    const words = q.value.trim();
    const n = ++asked;
    if (!team) return;
    try {
      const r = words
        ? await api('GET', `/api/teams/${enc(team)}/memory/search?q=${enc(words)}&limit=${SHOW}`)
        : await api('GET', `/api/teams/${enc(team)}/memory?limit=${SHOW}`);
      if (n !== asked || team !== state.team) return; // (2)
      list.replaceChildren(...r.facts.map(factItem));
      empty.hidden = r.facts.length > 0;
      empty.textContent = words ? `No fact matches “${words}”.`
        : 'No facts yet. Save one below, or an agent saves one with memory_save.';
      say('#memory-msg', '');
    } catch (e) {
      if (n !== asked) return;
      list.replaceChildren();
      empty.hidden = true;
      say('#memory-msg', e.message, 'error');
    }
  }

  q.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(load, TYPE_PAUSE);
  });
  $('#memory-search').addEventListener('submit', (e) => {
    e.preventDefault();
    clearTimeout(timer);
    load();
  });

  $('#memory-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const form = e.target;
    const text = $('#memory-text').value;
    if (!text.trim() || !state.team) return;
    const btn = form.querySelector('button[type="submit"]');
    btn.disabled = true;
    try {
      const r = await api('POST', `/api/teams/${enc(state.team)}/memory`,
        {text, scope: $('#memory-scope').value});
      form.reset();
      say('#memory-save-msg', `Saved fact #${r.fact.id}.`, 'ok');
      load();
    } catch (err) {
      say('#memory-save-msg', err.message, 'error'); // (3): the text stays
    } finally {
      btn.disabled = false;
    }
  });

  // (6) a team's first list waits until the page is idle: the board and
  // the agents, above it, load first
  const idle = (f) => (window.requestIdleCallback ? requestIdleCallback(() => f(), {timeout: 1000})
    : setTimeout(f, 100));
  document.addEventListener('huddle:team', () => {
    q.value = '';
    say('#memory-save-msg', '');
    idle(load);
  });
  if (state.team) idle(load);
})();
