// app.js -- the huddle dashboard. Plain JavaScript, no framework, no build
// step; the server embeds this file in its binary.
//
// How it stays live:
//  (1) ONE EventSource on /api/events?team=<id>&after=<seq>. Every event has
//      an `id:`; the browser resends the last one as Last-Event-ID when it
//      reconnects, and the server replays what came after, so nothing is
//      lost. Should the browser give up (readyState CLOSED), a new
//      EventSource starts from the last id seen, through ?after=.
//  (2) Events are notifications; the REST routes are the truth. A
//      team_chat_post fetches the room since the last seq shown; board
//      events refetch the board (debounced); agent_status updates an agent
//      in place. After every reconnect the room, board and agents are
//      fetched again, so a gap can never leave the page stale.
//  (3) Data never reaches markup: every node is built with createElement
//      and text goes in as text nodes; no string is ever parsed as HTML
//      here. The one exception, an agent's reply rendered as Markdown,
//      lives in render.js (marked, then DOMPurify's allowlist, raw HTML
//      escaped). The page's Content-Security-Policy backs this up.
//  (4) board.js and forms.js (acting from the board, creating teams and
//      agents) use what window.huddle hands them, and hear the page through
//      document events: huddle:team (a team was selected), huddle:event
//      (each event from the stream, as detail) and huddle:board (the board
//      was drawn again).
//  (5) Nothing on screen says "null" or "undefined": an absent field is
//      left out (a team without a description shows none), and what is
//      missing is said in words ("waiting for coder").
//  (6) Many tasks, many posts: a board column draws BOARD_PAGE cards and a
//      "Show more" button (its count is always the whole column); the room
//      opens on its last ROOM_FIRST posts, a note at its top says how many
//      came before and loads them ROOM_FIRST at a time, and appending
//      keeps at most ROOM_KEEP posts in the DOM; the events log shows
//      EVENTS_SHOW rows. Nothing the page draws at once grows with the
//      team's history.
//  (7) Empty is said in words: no team (what to do first: New team, or
//      `huddle up` / `huddle team create`), a team without agents or
//      without tasks (how to add them), each once its list has loaded.
//  (8) Keyboard: while a modal dialog is open, or focus is in the task
//      drawer, Tab and Shift+Tab cycle inside it (trapFocus); the dialog
//      or drawer gives focus back to what opened it when it closes.
//  (9) Opening a team is two round trips, not a waterfall: the log's
//      recent past (asked for beside the list of teams when the address
//      names the team), then at once the stream (from that past's last
//      seq), the board, the agents and the room (from the newest post that
//      past names). Nothing waits on a debounce. The board and the agents
//      are drawn as they come; the events log, whose sentences name tasks
//      by their subject, once the board has been drawn and painted. boot.js
//      sends these same first requests while the page is still loading;
//      api() takes its answers (boot.js (2)).
// (10) The room's first posts are drawn once the page has painted what
//      was drawn before them and is idle (afterPaint): a team's board and
//      agents are on screen first. marked and DOMPurify (render.js) are not loaded
//      with the page but then (R.ready()), or for a conversation's first
//      drawing if that comes sooner; the board and the agents never wait
//      for them.
'use strict';

(() => {
  const ROOM_PAGE = 500; // the API's maximum page
  const ROOM_KEEP = 1000; // posts kept in the DOM
  const ROOM_FIRST = 100; // posts a room opens on, and loads per "Show more" above them
  const BOARD_PAGE = 50; // cards drawn per column at first, and per "Show more"
  const EVENTS_KEEP = 1000; // events kept in memory
  const EVENTS_SHOW = 300; // rows shown at once
  const EVENTS_PAST = 200; // the log's recent past a team opens on
  const STATUSES = ['pending', 'claimed', 'in_progress', 'verifying', 'completed', 'failed', 'cancelled'];
  // Every kind the server emits (SPEC 13 and the modules); an EventSource
  // only hears named events it listens for.
  const KINDS = [
    'task_created', 'task_claimed', 'status_changed', 'dep_linked', 'task_comment',
    'team_chat_post', 'message_sent', 'mention_dropped',
    'speaker_selected', 'turn_bound_hit', 'turn_started', 'turn_completed', 'cost',
    'conversation_started', 'conversation_reply', 'conversation_completed', 'conversation_cancelled',
    'agent_status', 'agent_added', 'agent_removed', 'agent_updated',
    'team_created', 'team_updated', 'team_removed', 'team_status',
    'shutdown_requested', 'shutdown_approved', 'shutdown_aborted', 'shutdown_completed',
    'budget_paused', 'error', 'tool_call', 'session_reset',
    'wake_queued', 'autorun_turn_started', 'autorun_turn_completed', 'autorun_turn_aborted',
    'agent_parked', 'agent_unparked', 'team_autorun',
    'task_reassigned', 'conversation_resumed', 'budget_set', 'budget_exceeded', 'agent_replaced',
    'turn_failed', 'exchange_resumed',
    'routine_added', 'routine_fired', 'routine_fire_failed', 'routine_enabled', 'routine_disabled',
    'routine_removed',
    'verify_queued', 'verify_started', 'verify_gate', 'verify_failed', 'verify_verdict',
  ];
  const BOARD_KINDS = new Set(['task_created', 'task_claimed', 'status_changed', 'dep_linked']);
  const AGENT_KINDS = new Set(['agent_added', 'agent_removed', 'agent_updated']);
  const TEAM_KINDS = new Set(['team_created', 'team_updated', 'team_removed', 'team_status',
    'shutdown_completed', 'shutdown_aborted']);
  const R = window.huddleRender; // render.js: replies, money, sentences
  const STATUS_TEXT = {
    idle: 'idle', woken: 'woken', working: 'working', shutdown_requested: 'shutting down',
    shutdown: 'shut down', error: 'error',
  };
  // Hues far enough apart to tell authors at a glance; an author's hue is
  // picked by a hash of its id, so it never changes between loads.
  const HUES = [221, 152, 276, 24, 340, 190, 96, 256, 4, 44, 170, 312];

  const $ = (sel) => document.querySelector(sel);

  // A server started with --token (needed beyond loopback) serves this page
  // to anyone but its data only with the token: open the page once as
  // /#token=<token> (or ?token=). The token is kept for this tab and taken
  // out of the address bar and the history.
  const TOKEN = (() => {
    const inHash = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    const inQuery = new URLSearchParams(location.search).get('token');
    let t = inHash ? decodeURIComponent(inHash[1]) : inQuery;
    try {
      if (t) sessionStorage.setItem('huddle.token', t);
      else t = sessionStorage.getItem('huddle.token');
    } catch (e) { /* storage disabled: the token lives as long as the page */ }
    if (inHash || inQuery) history.replaceState(null, '', location.pathname);
    return t || null;
  })();

  // h('li', {class: 'x', 'data-id': 5}, 'text', child) -- the only way this
  // file makes markup: strings become text nodes.
  function h(tag, props, ...kids) {
    const el = document.createElement(tag);
    if (props) {
      for (const [k, v] of Object.entries(props)) {
        if (v === undefined || v === null || v === false) continue;
        if (k === 'class') el.className = v;
        else if (k === 'text') el.textContent = v;
        else if (k === 'hue') el.style.setProperty('--hue', String(v));
        else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
        else el.setAttribute(k, v === true ? '' : String(v));
      }
    }
    for (const kid of kids.flat()) {
      if (kid === undefined || kid === null || kid === false) continue;
      el.append(kid instanceof Node ? kid : String(kid));
    }
    return el;
  }

  function hueOf(name) {
    let x = 2166136261; // FNV-1a
    for (let i = 0; i < name.length; i++) {
      x ^= name.charCodeAt(i);
      x = Math.imul(x, 16777619);
    }
    return HUES[(x >>> 0) % HUES.length];
  }

  function avatar(name, cls) {
    return h('span', {class: 'avatar ' + (cls || ''), hue: hueOf(name), 'aria-hidden': 'true'},
      (name[0] || '?').toUpperCase());
  }

  const timeFmt = new Intl.DateTimeFormat(undefined, {hour: '2-digit', minute: '2-digit'});
  const secFmt = new Intl.DateTimeFormat(undefined,
    {hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23'});
  function timeEl(ms, seconds) {
    const d = new Date(ms);
    return h('time', {datetime: d.toISOString(), title: d.toLocaleString()},
      (seconds ? secFmt : timeFmt).format(d));
  }

  // Body text with @mentions marked; text nodes only.
  function richText(text) {
    const out = [];
    const re = /@[A-Za-z0-9][A-Za-z0-9_-]*/g;
    let last = 0;
    let m;
    while ((m = re.exec(text)) !== null) {
      if (m.index > last) out.push(text.slice(last, m.index));
      out.push(h('span', {class: 'mention', hue: hueOf(m[0].slice(1).toLowerCase())}, m[0]));
      last = m.index + m[0].length;
    }
    if (last < text.length) out.push(text.slice(last));
    return out;
  }

  class HttpError extends Error {
    constructor(status, message, data) {
      super(message);
      this.status = status;
      this.data = data;
    }
    // The route itself is missing (an engine this server was built without).
    get missingRoute() {
      return this.status === 404 && this.message === 'no such route';
    }
  }

  async function api(method, path, body) {
    const opts = {method, headers: {Accept: 'application/json'}};
    if (TOKEN) opts.headers.Authorization = `Bearer ${TOKEN}`;
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    // the answer boot.js asked for early, when it did (boot.js (2))
    const res = await ((method === 'GET' && window.huddleBoot && huddleBoot.take(path)) || fetch(path, opts));
    let data = null;
    try {
      data = await res.json();
    } catch (e) {
      data = null;
    }
    if (!res.ok) {
      throw new HttpError(res.status, (data && data.error) || `HTTP ${res.status}`, data);
    }
    return data;
  }

  const enc = encodeURIComponent;

  // ---- state ---------------------------------------------------------------

  const state = {
    teams: [],
    team: null, // id
    gen: 0, // bumped on team switch: late answers for the old team are dropped
    agents: [],
    live: new Map(), // agent -> its turn's last tool calls
    lastError: new Map(), // agent -> its last post, when it was an [error: ...]
    tasks: [],
    taskById: new Map(), // the board's tasks by id, for the events' sentences
    agentsLoaded: false, // the empty states wait for their list (7)
    boardLoaded: false,
    colShown: new Map(), // status -> cards drawn in that column (6)
    roomSeq: 0,
    roomReady: false, // its first seq is known (loadRoomFirst): loadRoom may run
    lastPost: null, // {author, at} of the last post shown, for grouping
    lastEventId: 0,
    es: null,
    everOpen: false,
    retryTimer: null,
    retryDelay: 1000,
    events: [],
    kinds: new Set(),
    eventsStale: false, // a sentence lacked a task's subject: redraw after the board loads
    conversations: new Map(), // id -> {message, replies, files, status, pending, total, waitingFor}
    exchangeRunning: false,
  };

  // ---- connection indicator ------------------------------------------------

  let offlineTimer = null;
  function setConn(s) {
    const el = $('#conn');
    const text = {connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…',
      offline: 'Offline, retrying…'}[s];
    // Still down after a while: stay "offline" until the stream opens.
    if (el.dataset.state === s || (s === 'reconnecting' && el.dataset.state === 'offline')) return;
    el.dataset.state = s;
    el.querySelector('.conn-text').textContent = text;
    el.title = s === 'live' ? `Live: event #${state.lastEventId}` : text;
    clearTimeout(offlineTimer);
    if (s === 'reconnecting') offlineTimer = setTimeout(() => setConn('offline'), 8000);
  }

  // ---- serialized, coalesced loaders ---------------------------------------

  // A loader runs one fetch at a time; calls while it runs coalesce into
  // one more run, so bursts of events cost one or two requests.
  function loader(fn, delay) {
    let busy = false;
    let again = false;
    let timer = null;
    const run = async () => {
      timer = null;
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      try {
        do {
          again = false;
          const gen = state.gen;
          try {
            await fn(gen);
          } catch (e) {
            if (gen === state.gen) console.warn('huddle:', e.message);
          }
        } while (again);
      } finally {
        busy = false;
      }
    };
    // now: run at once (a page's first load), not after delay; the
    // promise settles when this run (and any it coalesced) is over.
    return (now) => {
      if (!delay || now === true) {
        clearTimeout(timer);
        return run();
      }
      if (!timer) timer = setTimeout(run, delay);
      return undefined;
    };
  }

  // ---- teams ---------------------------------------------------------------

  async function loadTeams() {
    const r = await api('GET', '/api/teams');
    state.teams = r.teams;
    renderTeams();
    // The team on screen was removed: show another, or the empty state.
    if (state.team && !state.teams.some((t) => t.id === state.team)) {
      if (state.teams.length) selectTeam(state.teams[0].id, false);
      else {
        state.gen++;
        state.team = null;
        closeStream();
        start();
      }
    }
  }

  function renderTeams() {
    const sel = $('#team-select');
    const opts = state.teams.map((t) => h('option', {value: t.id, selected: t.id === state.team},
      t.name && t.name !== t.id ? `${t.name} (${t.id})` : t.id));
    sel.replaceChildren(...opts);
    sel.disabled = state.teams.length === 0;
    sel.hidden = state.teams.length === 0;
    $('#no-teams').hidden = state.teams.length > 0;
    const t = state.teams.find((x) => x.id === state.team);
    const meta = $('#team-meta');
    if (!t) {
      meta.replaceChildren();
      return;
    }
    // (4) replaceChildren would write a null child as the text "null"
    meta.replaceChildren(...[
      t.status ? h('span', {class: 'team-status status-' + t.status}, t.status.replace('_', ' ')) : null,
      t.description ? h('span', {class: 'team-desc'}, t.description) : null].filter(Boolean));
    const color = /^#[0-9a-fA-F]{3,8}$/.test(t.color || '') ? t.color : '';
    document.documentElement.style.setProperty('--team', color || 'var(--accent)');
  }

  function teamFromPath() {
    const m = /^\/teams\/([a-z0-9][a-z0-9_-]{0,49})\/?$/.exec(location.pathname);
    return m ? m[1] : null;
  }

  async function selectTeam(id, push) {
    state.gen++;
    state.team = id;
    document.dispatchEvent(new CustomEvent('huddle:team'));
    closeStream();
    state.agents = [];
    state.live.clear();
    state.lastError.clear();
    state.tasks = [];
    state.taskById = new Map();
    state.agentsLoaded = false;
    state.boardLoaded = false;
    state.colShown.clear();
    state.roomSeq = 0;
    state.roomReady = false;
    state.lastPost = null;
    state.lastEventId = 0;
    state.everOpen = false;
    state.events = [];
    state.kinds = new Set();
    state.conversations.clear();
    $('#room-log').replaceChildren();
    $('#conversations').replaceChildren();
    $('#exchange-turn-list').replaceChildren();
    $('#exchange-result').replaceChildren();
    $('#agents-empty').hidden = true;
    $('#board-empty').hidden = true;
    for (const m of ['#ask-msg', '#exchange-msg', '#task-msg', '#post-msg']) say(m, '');
    renderEvents();
    renderTeams();
    $('#room-id').textContent = id ? `team:${id}` : '';
    try {
      localStorage.setItem('huddle.team', id);
    } catch (e) { /* private mode */ }
    const path = `/teams/${enc(id)}`;
    if (location.pathname !== path) {
      history[push ? 'pushState' : 'replaceState']({team: id}, '', path);
    }
    document.title = `${id} · huddle`;
    const gen = state.gen;
    // (9) The log's recent past first: its last seq is where the stream
    // starts, so nothing falls between the two; the board, the agents and
    // the room are asked for only once it is known, so whatever changes
    // after their answers comes on the stream. Those four then go at once.
    let past = null;
    try {
      const r = (await prefetched(id)) || await api('GET', `/api/events?team=${enc(id)}&limit=${EVENTS_PAST}`);
      if (gen !== state.gen) return;
      past = r.events;
    } catch (e) {
      if (gen !== state.gen) return;
    }
    state.lastEventId = past && past.length ? past[past.length - 1].seq : 0;
    openStream();
    loadBoard(true);
    loadAgents(true);
    loadRoomFirst(gen, past);
    // The events log names tasks by their subject: drawn once the board
    // is in (loadBoard), after the board has been drawn.
    for (const ev of past || []) recordEvent(ev);
    state.eventsStale = true;
  }

  // A long room starts near its end (6): the newest post's seq comes from
  // the last team_chat_post event, the newest in the log's recent past
  // when there is one (asked for only when there is not), and the page
  // shows the last ROOM_FIRST.
  async function loadRoomFirst(gen, past) {
    let head = null;
    for (let i = (past || []).length - 1; i >= 0 && head === null; i--) {
      if (past[i].kind === 'team_chat_post' && past[i].data) head = Number(past[i].data.seq) || 0;
    }
    if (head === null) {
      try {
        const r = await api('GET', `/api/events?team=${enc(state.team)}&kind=team_chat_post&limit=1`);
        if (gen !== state.gen) return;
        head = r.events.length && r.events[0].data ? Number(r.events[0].data.seq) : 0;
      } catch (e) {
        if (gen !== state.gen) return;
        head = 0;
      }
    }
    if (head > ROOM_FIRST && state.roomSeq < head - ROOM_FIRST) state.roomSeq = head - ROOM_FIRST;
    state.roomReady = true;
    loadRoom();
  }

  // ---- the event stream ----------------------------------------------------

  function closeStream() {
    clearTimeout(state.retryTimer);
    if (state.es) {
      state.es.close();
      state.es = null;
    }
  }

  function openStream() {
    closeStream();
    const gen = state.gen;
    const es = new EventSource(`/api/events?team=${enc(state.team)}&after=${state.lastEventId}` +
      (TOKEN ? `&token=${enc(TOKEN)}` : ''));
    state.es = es;
    es.onopen = () => {
      if (gen !== state.gen) return;
      state.retryDelay = 1000;
      setConn('live');
      if (state.everOpen) resync();
      state.everOpen = true;
    };
    es.onerror = () => {
      if (gen !== state.gen || state.es !== es) return;
      setConn('reconnecting');
      if (es.readyState === EventSource.CLOSED) {
        // The browser gave up; start again from the last event seen.
        state.es = null;
        state.retryTimer = setTimeout(() => {
          if (gen === state.gen) openStream();
        }, state.retryDelay);
        state.retryDelay = Math.min(state.retryDelay * 2, 10000);
      }
    };
    const onEvent = (msg) => {
      if (gen !== state.gen) return;
      const seq = Number(msg.lastEventId);
      if (!(seq > state.lastEventId)) return; // replayed: seen already
      state.lastEventId = seq;
      let ev;
      try {
        ev = JSON.parse(msg.data);
      } catch (e) {
        return;
      }
      handleEvent(ev);
    };
    for (const k of KINDS) es.addEventListener(k, onEvent);
    es.addEventListener('message', onEvent);
    // The server says it is stopping: the browser reconnects by itself.
    es.addEventListener('shutdown', () => {
      if (gen === state.gen) setConn('reconnecting');
    });
  }

  // After a reconnect: fetch again what events may have told us.
  function resync() {
    loadRoom();
    loadBoard();
    loadAgents();
    loadTeams().catch(() => {});
    for (const [id, c] of state.conversations) {
      if (c.status === 'running') loadConversation(id);
    }
  }

  function handleEvent(ev) {
    recordEvent(ev);
    addEventRow(ev);
    document.dispatchEvent(new CustomEvent('huddle:event', {detail: ev}));
    const d = ev.data || {};
    if (ev.kind === 'team_chat_post') loadRoom();
    else if (BOARD_KINDS.has(ev.kind)) loadBoard();
    else if (ev.kind === 'agent_status') {
      const a = state.agents.find((x) => x.id === ev.agent_id);
      // a turn that ended takes its live tool calls with it
      if (d.to !== 'working') state.live.delete(ev.agent_id);
      if (a && d.to) {
        // since when it works: the elapsed time on its card (progress.js)
        if (d.to !== 'working') a.turn_started_at = null;
        else if (a.status !== 'working' || !a.turn_started_at) a.turn_started_at = ev.ts || Date.now();
        a.status = d.to;
        // the reason an error comes with; any other status clears it
        a.status_reason = d.to === 'error' ? (d.reason || a.status_reason) : null;
        renderAgents();
      } else loadAgents();
    } else if (ev.kind === 'turn_failed') {
      // a failed turn leaves its agent in error until its next turn
      const a = state.agents.find((x) => x.id === ev.agent_id);
      if (a) {
        a.status = 'error';
        if (d.reason) a.status_reason = d.reason;
        renderAgents();
      } else loadAgents();
    } else if (ev.kind === 'tool_call') toolCall(ev.agent_id, d);
    else if (ev.kind === 'cost') {
      const a = state.agents.find((x) => x.id === ev.agent_id);
      if (a && typeof d.usd === 'number') {
        a.spent_usd = (a.spent_usd || 0) + d.usd;
        renderAgents();
      }
    } else if (ev.kind === 'wake_queued' || ev.kind === 'agent_parked' ||
               ev.kind === 'agent_unparked' || ev.kind === 'autorun_turn_started' ||
               ev.kind === 'autorun_turn_completed' || ev.kind === 'autorun_turn_aborted') {
      autorunEvent(ev.kind, ev.agent_id, d);
    } else if (AGENT_KINDS.has(ev.kind)) loadAgents();
    else if (TEAM_KINDS.has(ev.kind)) loadTeams().catch(() => {});
    else if (ev.kind === 'speaker_selected') exchangeTurn(d);
    else if (ev.kind === 'turn_bound_hit') exchangeBound(d);
    else if (ev.kind === 'conversation_started') conversationStarted(d);
    else if (ev.kind === 'conversation_reply') conversationReply(d);
    else if (ev.kind === 'conversation_completed') conversationCompleted(d);
    else if (ev.kind === 'conversation_cancelled') conversationCompleted(d, 'cancelled');
  }

  // ---- agents --------------------------------------------------------------

  const loadAgents = loader(async (gen) => {
    const r = await api('GET', `/api/teams/${enc(state.team)}/agents`);
    if (gen !== state.gen) return;
    // The leader first, then by id: a stable order that never reshuffles.
    state.agents = r.agents.sort((a, b) => (b.leader - a.leader) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    state.agentsLoaded = true;
    renderAgents();
  }, 100);

  // A turn in progress, call by call (tool_call events): the last few
  // calls of each working agent, each pending until its result comes.
  const LIVE_CALLS = 4;
  function toolCall(agent, d) {
    if (!agent) return;
    const calls = state.live.get(agent) || [];
    const known = d.id ? calls.find((c) => c.id === d.id) : null;
    if (d.phase === 'result' && known) {
      known.done = true;
      known.error = !!d.error;
    } else if (d.phase === 'call' || !known) {
      calls.push({id: d.id, name: d.name || 'tool', done: d.phase === 'result', error: !!d.error});
    }
    state.live.set(agent, calls.slice(-LIVE_CALLS));
    renderAgents();
  }

  function toolName(name) {
    // mcp__huddle__task_claim -> task_claim: huddle's own tools by name
    // (claude-code's events say task_claim now; older ones kept the prefix)
    const m = /^mcp__huddle__(.+)$/.exec(name);
    return m ? m[1] : name;
  }

  // Autorun (the supervisor): a wake shows the card "woken" until its turn
  // starts (then agent_status says working); a park shows why. The agents
  // route gives both on every (re)load, so a gap never leaves them stale.
  // An event is shown at once, then the agents are loaded again: a load
  // already under way may have read them before the event (a park, then
  // its unpark) and would put the old state back when it lands; the
  // loader runs once more after it, so the last word is a read made after
  // the event.
  function autorunEvent(kind, agent, d) {
    const a = state.agents.find((x) => x.id === agent);
    if (!a) return loadAgents();
    if (kind === 'wake_queued') a.woken = true;
    else if (kind === 'autorun_turn_started') a.woken = false;
    else if (kind === 'agent_parked') a.parked = d.reason || 'parked';
    else if (kind === 'agent_unparked') a.parked = null;
    renderAgents();
    loadAgents();
  }

  function shownStatus(a) {
    return a.status === 'idle' && a.woken ? 'woken' : a.status;
  }

  function renderAgents() {
    const current = new Map();
    for (const t of state.tasks) {
      if ((t.status === 'claimed' || t.status === 'in_progress') && t.owner && !current.has(t.owner)) {
        current.set(t.owner, t);
      }
    }
    const items = state.agents.map((a) => {
      const t = current.get(a.id);
      const scripted = !!a.scripted;
      const shown = shownStatus(a);
      return h('li', {class: 'agent', 'data-agent': a.id, 'data-status': shown},
        avatar(a.id),
        h('div', {class: 'agent-main'},
          h('div', {class: 'agent-name'},
            h('span', {class: 'name'}, a.name && a.name !== a.id ? `${a.name}` : a.id),
            a.leader ? h('span', {class: 'badge lead', title: 'team leader'}, 'lead') : null),
          // ticked every second by progress.js
          a.status === 'working' && a.turn_started_at ? h('div', {class: 'working-time', role: 'timer',
            'data-since': a.turn_started_at}, `working ${window.HuddleProgress ? HuddleProgress.elapsed(a.turn_started_at) : ''}`) : null,
          h('div', {class: 'agent-sub'},
            a.role ? h('span', {class: 'role'}, a.role) : null,
            h('span', {class: 'badge runtime' + (scripted ? ' scripted' : ''),
              title: scripted ? 'scripted: canned replies for demos and tests' : `runtime: ${a.runtime || 'none'}`},
            scripted ? 'scripted' : (a.runtime || 'no runtime')),
            h('span', {class: 'spent', title: `${R.moneyExact(a.spent_usd || 0)} spent so far` +
              (scripted ? ' (estimated: scripted)' : '')}, R.moneyText(a.spent_usd || 0))),
          h('div', {class: 'agent-task'},
            t ? [h('span', {class: 'task-ref'}, `#${t.id}`), ' ', t.subject]
              : h('span', {class: 'muted'}, 'No task')),
          liveCalls(a),
          agentError(a),
          a.parked
            ? h('div', {class: 'agent-parked', title: 'autorun wakes it again when something new arrives for it'},
              `parked: ${a.parked}`)
            : null),
        h('span', {class: 'status-pill s-' + shown}, STATUS_TEXT[shown] || shown || 'unknown'));
    });
    $('#agents').replaceChildren(...items);
    if (state.agentsLoaded && window.huddleBoot) huddleBoot.mark('huddle:agents');
    $('#agents-count').textContent = state.agents.length ? String(state.agents.length) : '';
    const empty = $('#agents-empty');
    empty.hidden = !state.agentsLoaded || state.agents.length > 0;
    if (!empty.hidden) {
      empty.replaceChildren('No agents yet. ', h('strong', null, 'Add agent'),
        ' gives this team its first one (the scripted runtime needs no model), or on the command line: ',
        h('code', null, `huddle agent add ${state.team} coder --runtime scripted`), '.');
    }
  }

  // An agent in error says why: the reason its failed turn recorded
  // (status_reason), else its last "[error: ...]" post in the room.
  function agentError(a) {
    if (a.status !== 'error') return null;
    const why = a.status_reason || state.lastError.get(a.id);
    return why ? h('div', {class: 'agent-error', title: why}, why) : null;
  }

  function liveCalls(a) {
    const calls = a.status === 'working' ? state.live.get(a.id) : null;
    if (!calls || !calls.length) return null;
    return h('ol', {class: 'live-calls', title: 'the turn in progress'},
      calls.map((c) => h('li', {class: 'call' + (c.done ? (c.error ? ' failed' : ' done') : ' running')},
        h('span', {class: 'mark'}, c.done ? (c.error ? '✗' : '✓') : '…'), ' ', toolName(c.name))));
  }

  // ---- board ---------------------------------------------------------------

  const loadBoard = loader(async (gen) => {
    try {
      const r = await api('GET', `/api/teams/${enc(state.team)}/tasks`);
      if (gen !== state.gen) return;
      state.tasks = r.tasks;
      state.taskById = new Map(r.tasks.map((t) => [t.id, t]));
      state.boardLoaded = true;
      renderBoard();
      renderAgents();
    } finally {
      // sentences that lacked a task's subject, or the log's recent past
      // waiting for its first board (selectTeam), even when that failed
      if (gen === state.gen && state.eventsStale) renderEventsLater();
    }
  }, 60);

  // A subtask's card is indented and names its parent ("↳ #3").
  function taskCard(t) {
    const blocked = (t.blocked_by || []).length > 0;
    const sub = t.parent_id != null;
    return h('li', {class: 'card' + (blocked ? ' blocked' : '') + (sub ? ' subtask' : ''),
      'data-task-id': t.id, 'aria-label': `Task ${t.id}: ${t.subject}`},
    h('div', {class: 'card-top'},
      h('span', {class: 'task-id'}, `#${t.id}`),
      sub ? h('span', {class: 'parent-ref', title: `a subtask of #${t.parent_id}`},
        `\u21b3 #${t.parent_id}`) : null,
      t.priority ? h('span', {class: 'prio', title: 'priority'}, `P${t.priority}`) : null),
    h('p', {class: 'subject'}, t.subject),
    t.status === 'failed' && t.reason ? h('p', {class: 'reason'}, t.reason) : null,
    t.status === 'completed' && t.result ? h('p', {class: 'result'}, t.result) : null,
    h('div', {class: 'card-meta'},
      t.owner ? h('span', {class: 'owner', title: 'owner'}, avatar(t.owner, 'sm'),
        h('span', {class: 'owner-name'}, t.owner)) : null,
      blocked ? h('span', {class: 'blocked-by'},
        'blocked by ' + t.blocked_by.map((x) => '#' + x).join(', ')) : null));
  }

  // A column's tasks in their order, except that a subtask whose parent is
  // in the same column follows it (its own subtasks after it, likewise).
  function underParents(list) {
    const here = new Set(list.map((t) => t.id));
    const kids = new Map();
    for (const t of list) {
      if (t.parent_id != null && here.has(t.parent_id)) {
        if (!kids.has(t.parent_id)) kids.set(t.parent_id, []);
        kids.get(t.parent_id).push(t);
      }
    }
    const out = [];
    const add = (t) => { out.push(t); for (const k of kids.get(t.id) || []) add(k); };
    for (const t of list) if (t.parent_id == null || !here.has(t.parent_id)) add(t);
    return out;
  }

  // (6) A column draws its first colShown cards (BOARD_PAGE at first);
  // its button draws BOARD_PAGE more and moves focus to the first of them.
  function moreButton(col, s) {
    let btn = col.querySelector('.col-more');
    if (!btn) {
      btn = h('button', {type: 'button', class: 'btn col-more', 'data-status': s, onclick: () => {
        const from = state.colShown.get(s) || BOARD_PAGE;
        state.colShown.set(s, from + BOARD_PAGE);
        renderBoard();
        const next = col.querySelectorAll('.cards > .card')[from];
        if (next) next.focus();
      }});
      col.querySelector('.cards').after(btn);
    }
    return btn;
  }

  function renderBoard() {
    const by = new Map(STATUSES.map((s) => [s, []]));
    for (const t of state.tasks) (by.get(t.status) || by.get('pending')).push(t);
    for (const [s, list] of by) {
      list.sort((a, b) => (s === 'completed' || s === 'failed' || s === 'cancelled')
        ? (b.updated_at - a.updated_at) || (b.id - a.id)
        : (b.priority - a.priority) || (a.id - b.id));
      const col = document.getElementById('col-' + s);
      const shown = state.colShown.get(s) || BOARD_PAGE;
      col.querySelector('.count').textContent = String(list.length);
      col.querySelector('.cards').replaceChildren(...underParents(list).slice(0, shown).map(taskCard));
      col.classList.toggle('is-empty', list.length === 0);
      const rest = list.length - shown;
      const more = moreButton(col, s);
      more.hidden = rest <= 0;
      if (rest > 0) {
        more.textContent = `Show ${Math.min(rest, BOARD_PAGE)} more (${rest} not shown)`;
      }
    }
    $('#col-cancelled').hidden = by.get('cancelled').length === 0;
    const empty = $('#board-empty');
    empty.hidden = !state.boardLoaded || state.tasks.length > 0;
    if (!empty.hidden) {
      empty.replaceChildren('No tasks yet. Type one in ', h('em', null, 'New task…'),
        ' above and press Enter, or on the command line: ',
        h('code', null, `huddle task create ${state.team} "Write the docs"`),
        '. Agents claim pending tasks; a card opens to assign one by hand.');
    }
    if (state.boardLoaded && window.huddleBoot) huddleBoot.mark('huddle:board');
    document.dispatchEvent(new CustomEvent('huddle:board'));
  }

  // ---- the room ------------------------------------------------------------

  const loadRoom = loader(async (gen) => {
    if (!state.roomReady) return; // loadRoomFirst calls it once it may
    for (;;) {
      const r = await api('GET',
        `/api/team-chat?teamId=${enc(state.team)}&sinceSeq=${state.roomSeq}&limit=${ROOM_PAGE}`);
      // (10) The room's first answer is drawn once the page has painted
      // what came before it (the board) and is idle; Markdown is loaded
      // then
      if ($('#room-log').childElementCount === 0) await afterPaint();
      await R.ready();
      if (gen !== state.gen) return;
      appendPosts(r.posts);
      if (r.posts.length < ROOM_PAGE) return;
    }
  }, 0);

  // Settles once the page has painted what is drawn now and is idle (the
  // next frame, then an idle moment, at most a second later), or after
  // 2 s in a tab that paints nothing.
  function afterPaint() {
    return new Promise((done) => {
      requestAnimationFrame(() => (window.requestIdleCallback ? requestIdleCallback(() => done(), {timeout: 1000})
        : setTimeout(done, 0)));
      setTimeout(done, 2000);
    });
  }

  function nearBottom(el) {
    return el.scrollHeight - el.scrollTop - el.clientHeight < 60;
  }

  function postEl(p) {
    const kind = p.kind === 'system' || p.authorAgentId === 'huddle' ? 'system'
      : p.kind === 'user' ? 'user' : 'peer';
    const prev = state.lastPost;
    // Consecutive posts by one author within 5 minutes read as one block.
    const cont = prev && prev.author === p.authorAgentId && prev.kind === kind &&
      kind !== 'system' && p.createdAt - prev.at < 5 * 60 * 1000;
    state.lastPost = {author: p.authorAgentId, kind, at: p.createdAt};
    // an agent's failed turn posts "[error: ...]": its card says so
    if (kind === 'peer' && p.authorAgentId) {
      if (p.body.startsWith('[error: ')) state.lastError.set(p.authorAgentId, p.body);
      else state.lastError.delete(p.authorAgentId);
    }
    if (kind === 'system') {
      return h('li', {class: 'post system', 'data-seq': p.seq, 'data-author': p.authorAgentId},
        h('span', {class: 'sys-mark', 'aria-hidden': 'true'}),
        h('span', {class: 'body'}, p.body),
        timeEl(p.createdAt));
    }
    if (kind === 'user') {
      return h('li', {class: 'post user' + (cont ? ' cont' : ''), 'data-seq': p.seq, 'data-author': p.authorAgentId},
        cont ? null : h('div', {class: 'post-head'}, h('span', {class: 'author'}, 'You'), timeEl(p.createdAt)),
        h('div', {class: 'bubble'}, richText(p.body)));
    }
    return h('li', {class: 'post peer' + (cont ? ' cont' : ''), 'data-seq': p.seq,
      'data-author': p.authorAgentId, hue: hueOf(p.authorAgentId)},
    cont ? h('span', {class: 'avatar-gap'}) : avatar(p.authorAgentId),
    h('div', {class: 'post-main'},
      cont ? null : h('div', {class: 'post-head'},
        h('span', {class: 'author'}, p.authorAgentId), timeEl(p.createdAt)),
      // an agent's post: Markdown, as its replies (render.js)
      h('div', {class: 'body md'}, R.reply(p.body, hueOf, {mentions: true}))));
  }

  function appendPosts(posts) {
    const log = $('#room-log');
    const stick = nearBottom(log) || log.childElementCount === 0;
    const frag = document.createDocumentFragment();
    const errors = state.lastError.size;
    let errorPosts = 0;
    for (const p of posts) {
      if (p.seq <= state.roomSeq) continue;
      state.roomSeq = p.seq;
      errorPosts += p.body.startsWith('[error: ');
      frag.append(postEl(p));
    }
    // a failed turn's message may land after its card went red
    if (errorPosts || state.lastError.size !== errors) renderAgents();
    if (!frag.childNodes.length) {
      $('#room-empty').hidden = log.childElementCount > 0;
      return;
    }
    log.append(frag);
    if (window.huddleBoot) huddleBoot.mark('huddle:room');
    // (6) the oldest posts go; the note at the top counts them
    const note = log.querySelector('.post.earlier');
    for (let over = log.childElementCount - (note ? 1 : 0) - ROOM_KEEP; over > 0; over--) {
      (note ? note.nextElementSibling : log.firstElementChild).remove();
    }
    earlierNote();
    $('#room-empty').hidden = true;
    if (stick) {
      log.scrollTop = log.scrollHeight;
      $('#room-jump').hidden = true;
    } else {
      $('#room-jump').hidden = false;
    }
  }

  // (6) "N earlier posts are not shown. Show 100 more, or huddle chat read
  // TEAM for all." at the top of the room, while its first post is not the
  // room's first (seqs count a room's posts from 1).
  function earlierNote() {
    const log = $('#room-log');
    const first = log.querySelector('.post[data-seq]');
    const before = first ? Number(first.dataset.seq) - 1 : 0;
    let note = log.querySelector('.post.earlier');
    if (!(before > 0)) {
      if (note) note.remove();
      return;
    }
    if (!note) {
      note = h('li', {class: 'post earlier'});
      log.prepend(note);
    }
    note.replaceChildren(`${before} earlier post${before === 1 ? ' is' : 's are'} not shown. `,
      h('button', {type: 'button', class: 'linkish room-earlier', onclick: loadEarlier},
        `Show ${Math.min(before, ROOM_FIRST)} more`),
      ', or ', h('code', null, `huddle chat read ${state.team}`), ' for all.');
  }

  // The ROOM_FIRST posts before the first one shown, put above it; the
  // view stays on what it showed. They are history: the grouping and the
  // agents' last errors are the newest posts', kept as they were.
  async function loadEarlier(e) {
    const btn = e.currentTarget;
    const log = $('#room-log');
    const first = log.querySelector('.post[data-seq]');
    if (!first) return;
    const end = Number(first.dataset.seq) - 1;
    const since = Math.max(0, end - ROOM_FIRST);
    const gen = state.gen;
    btn.disabled = true;
    try {
      const r = await api('GET',
        `/api/team-chat?teamId=${enc(state.team)}&sinceSeq=${since}&limit=${end - since}`);
      if (gen !== state.gen || !first.isConnected) return;
      const keep = [state.lastPost, new Map(state.lastError)];
      state.lastPost = null;
      const frag = document.createDocumentFragment();
      for (const p of r.posts) if (p.seq <= end) frag.append(postEl(p));
      [state.lastPost, state.lastError] = keep;
      const height = log.scrollHeight;
      first.before(frag);
      log.scrollTop += log.scrollHeight - height;
      earlierNote();
      const note = log.querySelector('.room-earlier');
      if (note) note.focus();
    } catch (err) {
      btn.disabled = false;
      say('#post-msg', err.message, 'error');
    }
  }

  // ---- events log ----------------------------------------------------------

  function recordEvent(ev) {
    state.events.push(ev);
    if (state.events.length > EVENTS_KEEP) state.events.splice(0, state.events.length - EVENTS_KEEP);
    if (!state.kinds.has(ev.kind)) {
      state.kinds.add(ev.kind);
      renderKinds();
    }
  }

  function renderKinds() {
    const sel = $('#events-kind');
    const cur = sel.value;
    const kinds = [...state.kinds].sort();
    sel.replaceChildren(h('option', {value: ''}, 'All kinds'),
      ...kinds.map((k) => h('option', {value: k, selected: k === cur}, k)));
  }

  // An event in words (render.js), its agents and tasks as small chips:
  // a task by its subject when the board has it. An event often comes
  // before the board that knows its task: the log is drawn again once the
  // board is loaded.
  const sentenceCtx = {
    agent: (id) => h('span', {class: 'agent-ref', hue: hueOf(String(id))}, String(id)),
    task: (id, subject) => {
      const t = state.taskById.get(Number(id));
      const s = (t && t.subject) || subject;
      if (!s) state.eventsStale = true;
      return h('span', {class: 'task-ref'}, `#${id}`, s ? ` “${s}”` : null);
    },
    money: (usd) => R.money(usd),
  };

  function eventSentence(ev) {
    return h('span', {class: 'ev-sentence'}, R.eventSentence(ev, sentenceCtx));
  }

  // What the filter searches: the sentence and the event's JSON.
  function eventText(ev) {
    return `${ev.kind} ${eventSentence(ev).textContent} ${JSON.stringify(ev)}`;
  }

  function eventMatches(ev, f, kind) {
    if (kind && ev.kind !== kind) return false;
    if (!f) return true;
    return eventText(ev).toLowerCase().includes(f);
  }

  function kindTone(kind) {
    if (kind === 'error' || kind === 'mention_dropped' || kind.startsWith('shutdown')) return 'bad';
    if (BOARD_KINDS.has(kind)) return 'board';
    if (kind.startsWith('agent_')) return 'agent';
    if (kind.startsWith('team_') && kind !== 'team_chat_post') return 'team';
    if (kind.startsWith('conversation_') || kind.startsWith('turn_') || kind === 'speaker_selected') return 'talk';
    return 'plain';
  }

  // A row: when, what kind, and the sentence; the event's JSON behind a
  // toggle (closed, yet in the row's text, so the filter finds what it
  // shows).
  function eventRow(ev) {
    const json = h('details', {class: 'ev-json'}, h('summary', {title: 'the event as the API gives it'}, 'JSON'),
      h('pre', null, JSON.stringify(ev, null, 2)));
    return h('tr', {'data-kind': ev.kind, 'data-seq': ev.seq},
      h('td', {class: 'ev-time'}, timeEl(ev.ts, true)),
      h('td', null, h('span', {class: 'kind k-' + kindTone(ev.kind || '')}, ev.kind)),
      h('td', {class: 'ev-detail'}, eventSentence(ev), json));
  }

  function filterValues() {
    return [$('#events-filter').value.trim().toLowerCase(), $('#events-kind').value];
  }

  function renderEvents() {
    const [f, kind] = filterValues();
    const rows = [];
    for (let i = state.events.length - 1; i >= 0 && rows.length < EVENTS_SHOW; i--) {
      if (eventMatches(state.events[i], f, kind)) rows.push(eventRow(state.events[i]));
    }
    $('#events tbody').replaceChildren(...rows);
    $('#events-empty').hidden = rows.length > 0;
    $('#events-empty').textContent = state.events.length ? 'No event matches the filter.' : 'No events yet.';
  }

  // (9) The log drawn again once the board has been painted: the board
  // first, the log under it next, when the page is idle. Drawn once however
  // often it is asked for before then; a hidden tab (no frames) draws it
  // after a while.
  let eventsLater = null;
  function renderEventsLater() {
    const gen = state.gen;
    if (eventsLater && eventsLater.gen === gen) return;
    const token = {gen};
    eventsLater = token;
    const run = () => {
      if (eventsLater !== token) return;
      eventsLater = null;
      if (gen !== state.gen) return;
      state.eventsStale = false;
      renderEvents();
    };
    requestAnimationFrame(() => (window.requestIdleCallback ? requestIdleCallback(run, {timeout: 1000})
      : setTimeout(run, 0)));
    setTimeout(run, 2000);
  }

  function addEventRow(ev) {
    const [f, kind] = filterValues();
    if (!eventMatches(ev, f, kind)) return;
    const body = $('#events tbody');
    body.prepend(eventRow(ev));
    while (body.childElementCount > EVENTS_SHOW) body.lastElementChild.remove();
    $('#events-empty').hidden = true;
  }

  // ---- ask the team (conversations) ----------------------------------------

  function conv(id) {
    let c = state.conversations.get(id);
    if (!c) {
      c = {id, message: null, replies: [], files: [], status: 'running', pending: null, total: null, waitingFor: []};
      state.conversations.set(id, c);
    }
    return c;
  }

  function renderConversation(c) {
    if (!R.loaded()) { // (10) its replies are Markdown: drawn once marked is in
      R.ready().then(() => renderConversation(c));
      return;
    }
    const list = $('#conversations');
    let li = list.querySelector(`li[data-conversation="${CSS.escape(c.id)}"]`);
    const fresh = !li;
    if (fresh) li = h('li', {class: 'conv', 'data-conversation': c.id});
    const done = c.status === 'completed' || c.status === 'cancelled';
    const n = c.total != null ? c.total : c.replies.length;
    // who it waits for, by name; a count only until the snapshot says who
    const statusText = done
      ? `${c.status === 'cancelled' ? 'cancelled' : 'answered'} · ${n} repl${n === 1 ? 'y' : 'ies'}`
      : c.waitingFor.length ? `waiting for ${c.waitingFor.join(', ')}`
        : c.pending ? `waiting for ${c.pending} more repl${c.pending === 1 ? 'y' : 'ies'}` : 'thinking…';
    li.dataset.status = c.status;
    // a reply that is a failed turn marks the whole conversation
    const failed = c.replies.filter((r) => r.error);
    li.classList.toggle('failed', failed.length > 0);
    li.replaceChildren(
      h('div', {class: 'conv-head'},
        h('span', {class: 'conv-q'}, c.message || 'A conversation'),
        failed.length ? h('span', {class: 'conv-error'},
          failed.length === 1 ? `${failed[0].agent} failed` : `${failed.length} replies failed`) : null,
        h('span', {class: 'conv-status' + (done ? ' done' : '')}, statusText),
        c.status === 'running' ? h('button', {type: 'button', class: 'btn conv-cancel',
          'data-cancel-conversation': c.id, title: 'stop its running turns and end it'}, 'Cancel') : null),
      h('ol', {class: 'replies'}, c.replies.map((r) => h('li', {class: 'reply' + (r.error ? ' failed' : ''),
        'data-agent': r.agent, 'data-seq': r.seq, hue: hueOf(r.agent)},
        avatar(r.agent, 'sm'), h('span', {class: 'author'}, r.agent),
        r.error ? h('span', {class: 'badge error', title: 'this turn failed'}, 'error') : null,
        // Markdown, sanitized, tags as chips (render.js)
        h('div', {class: 'body md'}, R.reply(r.body, hueOf)),
        replyFiles(c, r)))));
    // The replies are the team's answer: the aggregate (the API's
    // "response") is these replies joined, so it is not shown again.
    if (fresh) list.prepend(li);
    while (list.childElementCount > 20) list.lastElementChild.remove();
  }

  // The files a reply attached ([send_file: ...], a cut answer's whole
  // text), each a download link; the token rides in the query, as for SSE.
  function replyFiles(c, r) {
    const files = c.files.filter((f) => f.seq === r.seq);
    if (!files.length) return null;
    return h('span', {class: 'reply-files'}, files.map((f) => h('a', {
      class: 'file',
      href: `/api/conversations/${enc(c.id)}/files/${f.id}` + (TOKEN ? `?token=${enc(TOKEN)}` : ''),
      download: f.name,
      title: `${f.mediaType}, ${f.size} bytes`,
    }, `\u{1F4CE} ${f.name}`)));
  }

  // Replies carry their seq in the conversation (1, 2, ...): the snapshot
  // and the events can both bring the same reply, in either order, and the
  // seq says which ones are already shown.
  function mergeReplies(a, b) {
    const bySeq = new Map();
    for (const r of a.concat(b)) if (!bySeq.has(r.seq)) bySeq.set(r.seq, r);
    return [...bySeq.values()].sort((x, y) => x.seq - y.seq);
  }

  function conversationReply(d) {
    if (!d || !d.conversation_id) return;
    const c = conv(d.conversation_id);
    c.replies = mergeReplies(c.replies, [{seq: d.seq, agent: d.agent, body: d.reply, error: !!d.error}]);
    if (typeof d.pending === 'number') c.pending = d.pending;
    renderConversation(c);
    if (d.pending > 1) loadConversation(c.id); // who it still waits for
  }

  // A conversation started anywhere (the page, the CLI, an agent): shown
  // with its question and whom it was sent to.
  function conversationStarted(d) {
    if (!d || !d.conversation_id) return;
    const c = conv(d.conversation_id);
    if (d.message) c.message = d.message;
    if (d.agent && !c.replies.length) c.waitingFor = [d.agent];
    renderConversation(c);
  }

  function conversationCompleted(d, status) {
    if (!d || !d.conversation_id) return;
    const c = conv(d.conversation_id);
    c.status = status || 'completed';
    c.total = d.total_messages;
    c.pending = 0;
    c.waitingFor = [];
    renderConversation(c);
    loadConversation(c.id); // the files its replies attached
  }

  async function loadConversation(id) {
    const gen = state.gen;
    try {
      const r = await api('GET', `/api/conversations/${enc(id)}`);
      if (gen !== state.gen) return;
      const c = conv(id);
      // The snapshot is the truth; events may have brought the same replies
      // (or newer ones, committed after the snapshot was read).
      if (r.replies) c.replies = mergeReplies(r.replies.map((x) => ({seq: x.seq, agent: x.agent, body: x.body, error: !!x.isError})), c.replies);
      if (Array.isArray(r.files)) c.files = r.files;
      if (r.message) c.message = r.message;
      if (Array.isArray(r.waitingFor)) c.waitingFor = r.waitingFor;
      if (r.status === 'completed' || r.status === 'cancelled') {
        c.status = r.status;
        c.total = r.totalMessages;
        c.waitingFor = [];
      }
      if (typeof r.pending === 'number') c.pending = r.pending;
      renderConversation(c);
    } catch (e) { /* events still arrive */ }
  }

  async function askTeam(ev) {
    ev.preventDefault();
    const input = $('#ask-text');
    const message = input.value.trim();
    if (!message) return;
    const btn = ev.target.querySelector('button');
    btn.disabled = true;
    say('#ask-msg', 'Asking…');
    try {
      const r = await api('POST', `/api/teams/${enc(state.team)}/chat`, {message});
      const c = conv(r.conversationId);
      c.message = message;
      renderConversation(c);
      input.value = '';
      say('#ask-msg', '');
      loadConversation(r.conversationId);
    } catch (e) {
      if (e.missingRoute) {
        say('#ask-msg', 'Conversations are not available on this server yet ' +
          `(POST /api/teams/${state.team}/chat answered 404). Post in the room instead.`, 'warn');
      } else say('#ask-msg', e.message, 'error');
    } finally {
      btn.disabled = false;
    }
  }

  // ---- exchanges -----------------------------------------------------------

  function exchangeTurn(d) {
    if (!d || d.room_id !== `team:${state.team}`) return;
    $('#exchange-turn-list').append(h('li', {class: 'turn', 'data-speaker': d.speaker, hue: hueOf(d.speaker || '')},
      h('span', {class: 'turn-n'}, `Turn ${d.turn}`),
      avatar(d.speaker || '?', 'sm'),
      h('span', {class: 'author'}, d.speaker),
      h('span', {class: 'policy'}, d.policy)));
  }

  // "Ended after 2 turns of at most 5: nobody owes a turn on the board."
  // That end names Ask the team: the exchange follows the board, and a
  // question meant for the team wants a conversation routed by @mentions.
  function endText(reason, taken, max) {
    const n = Number(taken) || 0;
    return [h('span', {class: 'end-label'}, 'Ended '),
      `after ${n} turn${n === 1 ? '' : 's'}` + (max != null ? ` of at most ${max}` : '') + ': ',
      R.endReason(reason),
      reason ? ' (' : null,
      reason ? h('code', {class: 'end-reason', title: 'the end reason, as the API gives it'}, reason) : null,
      reason ? ').' : '.',
      reason === 'no_pending_obligation' ? h('span', {class: 'end-hint'},
        ' An exchange follows the board, not @mentions. To have the team answer a question, ',
        h('button', {type: 'button', class: 'linkish', onclick: () => {
          const ask = $('#ask-text');
          ask.value = ask.value || $('#exchange-stimulus').value || lastStimulus;
          ask.scrollIntoView({block: 'center'});
          ask.focus();
        }}, 'ask the team'), '.') : null].filter((x) => x !== null); // (4)
  }
  let lastStimulus = '';

  function exchangeBound(d) {
    if (!d || d.room_id !== `team:${state.team}`) return;
    $('#exchange-result').replaceChildren(...endText(d.reason, d.turns_taken, d.max_turns));
  }

  async function startExchange(ev) {
    ev.preventDefault();
    if (state.exchangeRunning) return;
    const stimulus = $('#exchange-stimulus').value.trim();
    const turns = parseInt($('#exchange-turns').value, 10);
    if (!stimulus) return;
    const btn = ev.target.querySelector('button');
    state.exchangeRunning = true;
    btn.disabled = true;
    if (window.HuddleProgress) HuddleProgress.exchangeRunning(true);
    $('#exchange-turn-list').replaceChildren();
    $('#exchange-result').replaceChildren();
    say('#exchange-msg', 'Running… turns appear in the room as they are taken.');
    const body = {teamId: state.team, stimulus};
    lastStimulus = stimulus;
    if (turns > 0) body.maxExchangeTurns = turns;
    try {
      const r = await api('POST', '/api/team-chat/exchange', body);
      const res = r.result || {};
      $('#exchange-result').replaceChildren(...endText(res.endedReason, res.turnsTaken),
        res.speakers && res.speakers.length ? ` · speakers: ${res.speakers.join(', ')}` : '');
      say('#exchange-msg', '');
      $('#exchange-stimulus').value = '';
    } catch (e) {
      if (e.missingRoute) {
        say('#exchange-msg', 'Exchanges are not available on this server yet ' +
          '(POST /api/team-chat/exchange answered 404).', 'warn');
      } else say('#exchange-msg', e.message, 'error');
    } finally {
      state.exchangeRunning = false;
      btn.disabled = false;
      if (window.HuddleProgress) HuddleProgress.exchangeRunning(false);
    }
  }

  // ---- forms ---------------------------------------------------------------

  function say(sel, text, tone) {
    const el = $(sel);
    el.textContent = text;
    el.dataset.tone = tone || '';
  }

  async function createTask(ev) {
    ev.preventDefault();
    const subject = $('#task-subject').value.trim();
    if (!subject) return;
    const body = {subject};
    const prio = $('#task-priority').value.trim();
    if (prio) body.priority = parseInt(prio, 10);
    const deps = $('#task-deps').value.match(/\d+/g);
    if (deps) body.depends_on = deps.map(Number);
    const btn = ev.target.querySelector('button');
    btn.disabled = true;
    try {
      const r = await api('POST', `/api/teams/${enc(state.team)}/tasks`, body);
      state.tasks = state.tasks.filter((t) => t.id !== r.task.id).concat([r.task]);
      renderBoard();
      ev.target.reset();
      say('#task-msg', '');
      $('#task-subject').focus();
    } catch (e) {
      say('#task-msg', e.message, 'error');
    } finally {
      btn.disabled = false;
    }
  }

  async function postToRoom(ev) {
    ev.preventDefault();
    const ta = $('#post-text');
    const text = ta.value;
    if (!text.trim()) return;
    const btn = ev.target.querySelector('button');
    btn.disabled = true;
    try {
      await api('POST', `/api/teams/${enc(state.team)}/posts`, {text});
      ta.value = '';
      say('#post-msg', '');
      const log = $('#room-log');
      log.scrollTop = log.scrollHeight; // your own post: follow it
      loadRoom();
    } catch (e) {
      say('#post-msg', e.message, 'error');
    } finally {
      btn.disabled = false;
      ta.focus();
    }
  }

  // ---- keyboard ------------------------------------------------------------

  // (8) Tab and Shift+Tab cycle inside an open modal dialog, or inside the
  // task drawer ([data-focus-trap]) while focus is in it; Escape closes
  // either (the dialog natively, the drawer in board.js).
  const TABBABLE = 'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])';
  function trapFocus(e) {
    if (e.key !== 'Tab' || e.defaultPrevented) return;
    const active = document.activeElement;
    const box = document.querySelector('dialog[open]') ||
      (active && active.closest ? active.closest('[data-focus-trap]:not([hidden])') : null);
    if (!box) return;
    const items = [...box.querySelectorAll(TABBABLE)].filter((el) => !el.disabled &&
      el.tabIndex >= 0 && el.getClientRects().length > 0);
    if (!items.length) return;
    const first = items[0];
    const last = items[items.length - 1];
    let to = null;
    if (!box.contains(active)) to = first;
    else if (e.shiftKey && (active === first || !items.includes(active))) to = last;
    else if (!e.shiftKey && active === last) to = first;
    if (!to) return;
    e.preventDefault();
    to.focus();
  }

  // ---- boot ----------------------------------------------------------------

  function bind() {
    document.addEventListener('keydown', trapFocus);
    $('#task-form').addEventListener('submit', createTask);
    $('#post-form').addEventListener('submit', postToRoom);
    $('#ask-form').addEventListener('submit', askTeam);
    $('#exchange-form').addEventListener('submit', startExchange);
    $('#post-text').addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        $('#post-form').requestSubmit();
      }
    });
    $('#team-select').addEventListener('change', (e) => selectTeam(e.target.value, true));
    // The stream carries this team's events only, so another team's birth
    // is learnt by asking: when the switcher is reached for, when the tab
    // comes back, and now and then.
    const refreshTeams = () => {
      if (state.team) loadTeams().catch(() => {});
    };
    $('#team-select').addEventListener('focus', refreshTeams);
    $('#team-select').addEventListener('pointerdown', refreshTeams);
    document.addEventListener('visibilitychange', () => {
      if (!document.hidden) refreshTeams();
    });
    setInterval(() => {
      if (!document.hidden) refreshTeams();
    }, 15000);
    $('#events-filter').addEventListener('input', renderEvents);
    $('#events-kind').addEventListener('change', renderEvents);
    const log = $('#room-log');
    log.addEventListener('scroll', () => {
      if (nearBottom(log)) $('#room-jump').hidden = true;
    });
    $('#room-jump').addEventListener('click', () => {
      log.scrollTop = log.scrollHeight;
      $('#room-jump').hidden = true;
      log.focus();
    });
    window.addEventListener('popstate', () => {
      const id = teamFromPath();
      if (id && id !== state.team && state.teams.some((t) => t.id === id)) selectTeam(id, false);
    });
  }

  // (9) The events of the team in the address, asked for beside the list
  // of teams (selectTeam takes them when it opens that team).
  // Its answer, or null (none for this team, or it failed: ask again).
  let early = null;
  function prefetched(id) {
    const p = early && early.id === id ? early.events : null;
    early = null;
    return p ? p.catch(() => null) : null;
  }

  async function boot() {
    bind();
    const id = teamFromPath();
    if (id) {
      early = {id, events: api('GET', `/api/events?team=${enc(id)}&limit=${EVENTS_PAST}`)};
      early.events.catch(() => {}); // not this team after all: never asked for
    }
    try {
      await loadTeams();
    } catch (e) {
      if (e.status === 401) {
        const p = $('#no-teams');
        p.replaceChildren('This server needs its token: open this page as ',
          h('code', null, `${location.origin}/#token=<token>`), '.');
        p.hidden = false;
        setConn('offline');
        return;
      }
      setConn('reconnecting');
      setTimeout(boot2, 2000);
      return;
    }
    start();
  }

  // A server that was down at load: keep trying.
  async function boot2() {
    try {
      await loadTeams();
      start();
    } catch (e) {
      setTimeout(boot2, 2000);
    }
  }

  function start() {
    let id = teamFromPath();
    let saved = null;
    try {
      saved = localStorage.getItem('huddle.team');
    } catch (e) { /* private mode */ }
    const known = (x) => x && state.teams.some((t) => t.id === x);
    if (!known(id)) id = known(saved) ? saved : (state.teams[0] && state.teams[0].id);
    if (id) selectTeam(id, false);
    else {
      // No team yet: listen to every team's events and show the first one
      // that appears.
      const es = new EventSource('/api/events' + (TOKEN ? `?token=${enc(TOKEN)}` : ''));
      state.es = es;
      es.onopen = () => setConn('live');
      es.onerror = () => setConn('reconnecting');
      es.addEventListener('team_created', () => {
        closeStream();
        boot2();
      });
    }
  }

  if (window.HuddleProgress) {
    HuddleProgress.init({api, team: () => state.team, say, loadConversation});
  }
  // For board.js and forms.js (4).
  window.huddle = Object.freeze({api, h, avatar, hueOf, timeEl, say, enc, state,
    eventDetail: eventSentence, loadBoard, loadAgents, loadTeams, selectTeam});

  boot();
})();
