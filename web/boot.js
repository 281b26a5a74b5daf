// boot.js -- the dashboard's first requests, sent while the rest of the
// page is still loading. The first script of index.html and a plain
// (blocking, tiny) one, so it runs before any other: its requests go out
// ahead of the page's deferred scripts, and app.js, which runs only once
// the document is parsed and every deferred script has run, finds the
// answers there or on their way instead of starting its round trips then.
//
// Invariants:
//  (1) It asks exactly what app.js asks first, in app.js's order and with
//      its headers (Accept, and the token as app.js finds it): the list of
//      teams and, when the address names a team (/teams/<id>), that team's
//      recent past in the log; the board and the agents once that past
//      has been answered (its answer's headers: the server has read the
//      log by then), the room from the newest post the past names (or,
//      when it names none, once the room's newest post has been asked
//      for). So app.js's rule that whatever changes after those answers
//      comes on the stream (app.js (9)) holds for these answers too. The
//      paths and their numbers (EVENTS_PAST, ROOM_FIRST, ROOM_PAGE) are
//      app.js's: a path app.js does not ask for is never used, so a
//      mismatch costs the head start, never correctness.
//  (2) take(path) hands a GET's answer (a Promise of its Response) to
//      app.js's api() once and forgets it; app.js reads it as it reads any
//      answer, so errors (a 401 without the token, a 404 for a team that
//      is gone) are handled as ever; a network failure is the same
//      TypeError fetch() gives. A path app.js asked for before it
//      was asked for here is never asked for here after (it would be an
//      old answer to a later question). Each answer is read whole as it
//      comes and handed over as a Response of the same status, headers
//      and bytes; only the log's is also read here. Nothing here touches
//      the page.
//  (3) The answers serve the first team the page opens only: when the page
//      opens another team (or this one again), everything not yet taken is
//      dropped, so no later request can get an old answer.
//  (4) performance marks (huddle:board, huddle:agents, huddle:room, each
//      once, when first drawn: mark(), called by app.js) say where a
//      load's time went; the browser test reports them.
'use strict';

window.huddleBoot = (() => {
  const EVENTS_PAST = 200; // app.js's
  const ROOM_FIRST = 100; // app.js's
  const ROOM_PAGE = 500; // app.js's
  const early = new Map(); // path -> Promise<Response>, not yet taken
  const enc = encodeURIComponent;
  let dropped = false; // (3)
  const missed = new Set(); // (2) paths app.js asked for before they were
  let asking = true; // until it has asked all it will (then missed is not needed)

  // as app.js's TOKEN: the address (#token= or ?token=), else this tab's
  // storage; app.js keeps it and cleans the address
  let token = null;
  try {
    const inHash = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    token = inHash ? decodeURIComponent(inHash[1])
      : new URLSearchParams(location.search).get('token') || sessionStorage.getItem('huddle.token');
  } catch (e) { /* storage disabled, or a malformed escape: app.js decides */ }
  const headers = {Accept: 'application/json'};
  if (token) headers.Authorization = `Bearer ${token}`;

  // path asked for now and kept for take(), read whole as it comes (so
  // app.js's json() has nothing left to wait for): a Response made of
  // its status, headers and bytes. Returns {answered, body}: answered
  // settles when its headers are in (true for a success), body with its
  // JSON (null when it failed).
  function get(path) {
    if (dropped || missed.has(path)) return {answered: Promise.resolve(false), body: Promise.resolve(null)};
    const p = fetch(path, {method: 'GET', headers});
    const read = p.then(async (res) => {
      const bytes = await res.arrayBuffer();
      const empty = res.status === 204 || res.status === 205 || res.status === 304;
      return {res: new Response(empty ? null : bytes, {status: res.status, statusText: res.statusText,
        headers: res.headers}), bytes, ok: res.ok};
    });
    const answered = p.then((res) => res.ok, () => false);
    const body = read.then((x) => (x.ok ? JSON.parse(new TextDecoder().decode(x.bytes)) : null)).catch(() => null);
    early.set(path, read.then((x) => x.res));
    early.get(path).catch(() => {}); // a failure is app.js's to report, when it takes it
    return {answered, body};
  }

  // the newest post's seq from team_chat_post events, or null
  function headOf(events) {
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i];
      if (e && e.kind === 'team_chat_post' && e.data) return Number(e.data.seq) || 0;
    }
    return null;
  }

  const m = /^\/teams\/([a-z0-9][a-z0-9_-]{0,49})\/?$/.exec(location.pathname);
  const team = m ? m[1] : null;
  get('/api/teams');
  if (!team) asking = false;
  else {
    const past = get(`/api/events?team=${enc(team)}&limit=${EVENTS_PAST}`);
    past.answered.then((ok) => {
      if (!ok || dropped) return;
      get(`/api/teams/${enc(team)}/tasks`);
      get(`/api/teams/${enc(team)}/agents`);
    });
    (async () => {
      await past.answered; // after the board's and the agents' (above)
      const r = await past.body;
      if (!r || !Array.isArray(r.events) || dropped) return;
      let head = headOf(r.events);
      if (head === null) {
        const n = await get(`/api/events?team=${enc(team)}&kind=team_chat_post&limit=1`).body;
        if (!n || !Array.isArray(n.events) || dropped) return;
        head = headOf(n.events) || 0;
      }
      get(`/api/team-chat?teamId=${enc(team)}&sinceSeq=${head > ROOM_FIRST ? head - ROOM_FIRST : 0}` +
        `&limit=${ROOM_PAGE}`);
    })().finally(() => {
      asking = false;
      missed.clear();
    });
  }

  // (3) the first team opened is the one asked for, else nothing is kept
  let opened = 0;
  document.addEventListener('huddle:team', () => {
    const hd = window.huddle;
    if (opened++ || !team || !hd || hd.state.team !== team) {
      opened = 1;
      dropped = true;
      asking = false;
      missed.clear();
      early.clear();
    }
  });

  // (4)
  const marked = new Set();
  function mark(name) {
    if (marked.has(name) || !window.performance || !performance.mark) return;
    marked.add(name);
    performance.mark(name);
  }

  return Object.freeze({
    take(path) {
      const p = early.get(path);
      if (!p) {
        if (asking) missed.add(path);
        return null;
      }
      early.delete(path);
      return p;
    },
    mark,
  });
})();
