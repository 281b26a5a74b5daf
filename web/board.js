// board.js -- acting from the board: the task drawer, dragging cards
// between columns, and the one question a move may need. Loaded after
// app.js, whose window.huddle it uses (api, h, state, loadBoard...).
//
//  (1) Every write acts as the user: no request names an actor ("as" is
//      never sent), and the board lets the user move any task. Handing a
//      task to an agent is the user's assign (pending -> claimed with that
//      owner), so the page says "Assign to", never "claim as".
//  (2) The library judges every move. A drop on a column maps to the one
//      action that puts a task there (DROP, after the state machine in
//      src/board/board.c). When the card's status is one that action
//      leaves, the page asks what it needs (whom, the result, the reason)
//      and sends it; when it is not, the page sends the action as it is
//      and shows the library's refusal, with the moves the card does
//      have. Only an assign, which cannot be sent without naming someone,
//      is answered by the page alone, with the moves that are possible.
//      Nothing moves on the page before the server has said yes: a refused
//      card stays in its column.
//  (3) The drawer shows GET /api/tasks/:id (its comments and dependents
//      included) and the task's history (GET /api/events?team=&task=), and
//      reads both again when the stream names the task. Its forms are
//      built once and only shown or hidden, so a reload never loses what
//      is being typed; answers that come back out of order are dropped.
//      Its Verification section is verify.js's: after each drawing the
//      drawer sends huddle:drawer (detail: the task, or null while it is
//      being read; the section's node; act(action, body, form), the
//      drawer's own way of acting; refresh(), reading the task again) and
//      verify.js fills the section.
//  (4) Keyboard and touch: every card is focusable, Enter or Space (or a
//      tap) opens the drawer, whose buttons do what the drags do; on a
//      narrow screen the drawer takes the whole width. Focus goes to the
//      drawer's title, Tab cycles inside it (data-focus-trap, app.js),
//      Escape closes it and focus returns to the card (or, when the card
//      is not drawn, to what opened the drawer).
//  (5) Data never reaches markup: every node comes from h() (createElement
//      and text nodes).
'use strict';

(() => {
  const hd = window.huddle;
  if (!hd) return;
  const {api, h, avatar, timeEl, state, enc} = hd;
  const $ = (sel) => document.querySelector(sel);

  const COLUMN = {
    pending: 'Pending', claimed: 'Claimed', in_progress: 'In progress',
    verifying: 'Verifying', completed: 'Completed', failed: 'Failed', cancelled: 'Cancelled',
  };
  // A drop on a column: the action that puts a task there, the statuses
  // it leaves, and what the page asks for first (2). Pending is reached by
  // release (from claimed or in progress) or retry (from failed).
  const DROP = {
    pending: {action: 'release', from: ['claimed', 'in_progress', 'failed']},
    claimed: {action: 'assign', from: ['pending'], ask: 'agent'},
    in_progress: {action: 'start', from: ['claimed']},
    completed: {action: 'complete', from: ['claimed', 'in_progress'], ask: 'result'},
    failed: {action: 'fail', from: ['claimed', 'in_progress'], ask: 'reason'},
    cancelled: {action: 'cancel', from: ['pending', 'claimed', 'in_progress', 'verifying']},
    // verifying is reached only by completing a task with a gate or a
    // critic; its verdict is the critic's (or a user's: the drawer's
    // Verification section, verify.js)
    verifying: {action: 'complete', from: []},
  };
  const OPEN = ['claimed', 'in_progress'];

  function dropAction(t, to) {
    return to === 'pending' && t.status === 'failed' ? 'retry' : DROP[to].action;
  }

  function orList(words) {
    return words.length < 2 ? words.join('')
      : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
  }

  // "From Claimed, #5 can move to In progress, Completed, ... or Cancelled."
  function movesText(t) {
    const to = Object.keys(DROP).filter((s) => s !== t.status && DROP[s].from.includes(t.status));
    if (!to.length) return `#${t.id} is ${COLUMN[t.status].toLowerCase()}: it moves no further.`;
    return `From ${COLUMN[t.status]}, #${t.id} can move to ${orList(to.map((s) => COLUMN[s]))}.`;
  }

  function sayBoard(text, tone) {
    hd.say('#board-msg', text, tone);
  }

  // Every write from the page: as the user (1). The board follows through
  // the stream; loading it now makes the move show at once.
  async function act(id, action, body) {
    const r = await api('POST', `/api/tasks/${id}/${action}`, body || {});
    hd.loadBoard();
    return r;
  }

  const taskById = (id) => state.tasks.find((t) => t.id === id);
  const boardCard = (el) => el && el.closest &&
    el.closest('#board .card[data-task-id], #col-cancelled .card[data-task-id]');

  // ---- the question a move needs -------------------------------------------

  let askDlg = null;
  function askDialog() {
    if (askDlg) return askDlg;
    const form = h('form', {method: 'dialog', class: 'ask-form'},
      h('h2', {class: 'ask-title', id: 'board-ask-title'}),
      h('label', {class: 'ask-label', for: 'board-ask-field'}),
      h('div', {class: 'ask-slot'}),
      h('div', {class: 'dialog-buttons'},
        h('button', {type: 'button', class: 'btn', value: 'cancel',
          onclick: () => askDlg.close('cancel')}, 'Cancel'),
        h('button', {type: 'submit', class: 'btn primary', value: 'ok'}, 'OK')));
    askDlg = h('dialog', {id: 'board-ask', class: 'hd-dialog', 'aria-labelledby': 'board-ask-title'}, form);
    document.body.append(askDlg);
    return askDlg;
  }

  // Ask for an agent, a result or a reason; resolves to the request's body
  // fields, or null when the question is dismissed.
  function askFor(kind, t) {
    const dlg = askDialog();
    let field;
    let title;
    let label;
    if (kind === 'agent') {
      title = `Assign #${t.id} to…`;
      label = 'Agent';
      field = h('select', {id: 'board-ask-field', required: true},
        state.agents.map((a) => h('option', {value: a.id},
          a.role ? `${a.id} (${a.role})` : a.id)));
    } else if (kind === 'result') {
      title = `Complete #${t.id}`;
      label = 'Result (optional)';
      field = h('textarea', {id: 'board-ask-field', rows: 3, maxlength: 10000,
        placeholder: 'What came of it'});
    } else {
      title = `Fail #${t.id}`;
      label = 'Reason (optional)';
      field = h('input', {id: 'board-ask-field', maxlength: 10000, placeholder: 'Why it failed'});
    }
    dlg.querySelector('.ask-title').textContent = title;
    dlg.querySelector('.ask-label').textContent = label;
    dlg.querySelector('.ask-slot').replaceChildren(field);
    dlg.querySelector('button[value="ok"]').textContent =
      kind === 'agent' ? 'Assign' : kind === 'result' ? 'Complete' : 'Fail';
    dlg.returnValue = '';
    return new Promise((resolve) => {
      dlg.addEventListener('close', () => {
        if (dlg.returnValue !== 'ok') return resolve(null);
        const v = field.value.trim();
        if (kind === 'agent') return resolve({agent: v});
        return resolve(v ? {[kind]: v} : {});
      }, {once: true});
      dlg.showModal();
      field.focus();
    });
  }

  // ---- a move: a drop, or the same through the drawer's buttons ------------

  async function move(id, to) {
    const t = taskById(id);
    if (!t || !DROP[to] || t.status === to) return;
    sayBoard('');
    const rule = DROP[to];
    const legal = rule.from.includes(t.status);
    const action = dropAction(t, to);
    let body = {};
    if (!legal && action === 'assign') {
      sayBoard(`Only a pending task can be assigned; #${t.id} is ${COLUMN[t.status].toLowerCase()}. ` +
        movesText(t), 'error');
      return;
    }
    if (legal && rule.ask) {
      if (rule.ask === 'agent' && !state.agents.length) {
        sayBoard('This team has no agent to assign to: add one first.', 'error');
        return;
      }
      body = await askFor(rule.ask, t);
      if (body === null) return;
    }
    try {
      await act(id, action, body);
    } catch (e) {
      const msg = h('span', {class: 'refusal'}, e.message);
      $('#board-msg').replaceChildren(msg, legal ? '' : ' ' + movesText(t));
      $('#board-msg').dataset.tone = 'error';
    }
  }

  // ---- drag and drop -------------------------------------------------------

  let dragId = null;
  const dropCol = (el) => el && el.closest && el.closest('#board .col, #col-cancelled');

  function endDrag() {
    dragId = null;
    document.body.classList.remove('board-dragging');
    for (const el of document.querySelectorAll('.dragging, .drop-over')) {
      el.classList.remove('dragging', 'drop-over');
    }
    // The cancelled strip shows only when it holds something (app.js).
    $('#col-cancelled').hidden = !state.tasks.some((t) => t.status === 'cancelled');
  }

  document.addEventListener('dragstart', (e) => {
    const card = boardCard(e.target);
    if (!card) return;
    dragId = Number(card.dataset.taskId);
    e.dataTransfer.setData('text/plain', String(dragId));
    e.dataTransfer.effectAllowed = 'move';
    card.classList.add('dragging');
    document.body.classList.add('board-dragging');
    $('#col-cancelled').hidden = false; // a drop target even when empty
  });
  document.addEventListener('dragend', endDrag);
  document.addEventListener('dragover', (e) => {
    const col = dropCol(e.target);
    if (!col || dragId === null) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'move';
    for (const el of document.querySelectorAll('.drop-over')) {
      if (el !== col) el.classList.remove('drop-over');
    }
    col.classList.add('drop-over');
  });
  document.addEventListener('drop', (e) => {
    const col = dropCol(e.target);
    if (!col || dragId === null) return;
    e.preventDefault();
    const id = Number(e.dataTransfer.getData('text/plain')) || dragId;
    endDrag();
    move(id, col.dataset.status);
  });

  // ---- the drawer ----------------------------------------------------------

  const drawer = {id: null, task: null, history: [], opener: null, seq: 0};
  let dr = null; // its nodes

  function field(id, label, control) {
    return [h('label', {for: id, class: 'visually-hidden'}, label), control];
  }

  function buildDrawer() {
    const btn = (id, text, onclick, cls) =>
      h('button', {id, type: 'button', class: 'btn' + (cls ? ' ' + cls : ''), onclick}, text);
    dr = {
      title: h('h2', {id: 'drawer-title', tabindex: '-1'}),
      facts: h('div', {id: 'drawer-facts', class: 'drawer-facts'}),
      verify: h('section', {id: 'drawer-verify', class: 'drawer-sec', 'aria-label': 'Verification',
        hidden: true}),
      assign: h('form', {id: 'drawer-assign', class: 'inline-form', onsubmit: onAssign},
        h('label', {for: 'drawer-agent'}, 'Assign to'),
        h('select', {id: 'drawer-agent', required: true}),
        h('button', {type: 'submit', class: 'btn primary'}, 'Assign')),
      buttons: h('div', {class: 'drawer-buttons'},
        btn('drawer-start', 'Start', () => drawerAct('start')),
        btn('drawer-release', 'Release', () => drawerAct('release')),
        btn('drawer-retry', 'Retry', () => drawerAct('retry')),
        btn('drawer-cancel', 'Cancel task', () => drawerAct('cancel'), 'danger')),
      complete: h('form', {id: 'drawer-complete', class: 'drawer-form', onsubmit: onComplete},
        field('drawer-result', 'Result', h('textarea', {id: 'drawer-result', rows: 2, maxlength: 10000,
          placeholder: 'Result (optional)'})),
        h('button', {type: 'submit', class: 'btn primary'}, 'Complete')),
      fail: h('form', {id: 'drawer-fail', class: 'inline-form', onsubmit: onFail},
        field('drawer-reason', 'Reason', h('input', {id: 'drawer-reason', maxlength: 10000,
          placeholder: 'Reason (optional)'})),
        h('button', {type: 'submit', class: 'btn'}, 'Fail')),
      final: h('p', {class: 'muted drawer-final'}),
      deps: h('div', {id: 'drawer-deps', class: 'drawer-deps'}),
      link: h('form', {id: 'drawer-link', class: 'inline-form', onsubmit: onLink},
        h('label', {for: 'drawer-dep'}, 'Depends on'),
        h('select', {id: 'drawer-dep', required: true}),
        h('button', {type: 'submit', class: 'btn'}, 'Link')),
      comments: h('ol', {id: 'drawer-comments', class: 'drawer-comments'}),
      comment: h('form', {id: 'drawer-comment', class: 'drawer-form', onsubmit: onComment},
        field('drawer-comment-text', 'Comment', h('textarea', {id: 'drawer-comment-text', rows: 2,
          maxlength: 10000, required: true, placeholder: 'Comment as you…'})),
        h('button', {type: 'submit', class: 'btn primary'}, 'Comment')),
      history: h('ol', {id: 'drawer-history', class: 'drawer-history'}),
      msg: h('p', {id: 'drawer-msg', class: 'form-msg', role: 'alert'}),
    };
    dr.el = h('aside', {id: 'task-drawer', class: 'drawer', role: 'dialog',
      'aria-labelledby': 'drawer-title', 'data-focus-trap': true, hidden: true},
    h('header', {class: 'drawer-head'}, dr.title,
      h('button', {type: 'button', class: 'btn drawer-close', 'aria-label': 'Close the task',
        onclick: closeDrawer}, '×')),
    h('div', {class: 'drawer-body'},
      dr.facts,
      dr.verify,
      h('section', {class: 'drawer-sec', 'aria-label': 'Actions'},
        h('h3', null, 'Actions'), dr.assign, dr.buttons, dr.complete, dr.fail, dr.final, dr.msg),
      h('section', {class: 'drawer-sec', 'aria-label': 'Dependencies'},
        h('h3', null, 'Dependencies'), dr.deps, dr.link),
      h('section', {class: 'drawer-sec', 'aria-label': 'Comments'},
        h('h3', null, 'Comments'), dr.comments, dr.comment),
      h('section', {class: 'drawer-sec', 'aria-label': 'History'},
        h('h3', null, 'History'), dr.history)));
    dr.el.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && !document.querySelector('dialog[open]')) {
        e.preventDefault();
        closeDrawer();
      }
    });
    document.body.append(dr.el);
  }

  function openTask(id, opener) {
    if (!dr) buildDrawer();
    if (drawer.id !== id) {
      drawer.task = taskById(id) || null;
      drawer.history = [];
      dr.msg.textContent = '';
      for (const el of dr.el.querySelectorAll('textarea, input')) el.value = '';
    }
    drawer.id = id;
    drawer.opener = opener || null;
    dr.el.hidden = false;
    document.body.classList.add('drawer-open');
    render();
    dr.title.focus();
    refresh();
  }

  function closeDrawer() {
    if (!dr || drawer.id === null) return;
    const id = drawer.id;
    const opener = drawer.opener;
    drawer.id = null;
    drawer.task = null;
    dr.el.hidden = true;
    document.body.classList.remove('drawer-open');
    markOpen();
    // back to the card it was opened from (drawn again since, maybe)
    const card = document.querySelector(`.card[data-task-id="${id}"]`);
    if (card) card.focus();
    else if (opener && opener.isConnected) opener.focus();
  }

  // The task and its history, read again; only the newest answer counts.
  let refreshTimer = null;
  function refresh() {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(async () => {
      const id = drawer.id;
      if (id === null || !state.team) return;
      const seq = ++drawer.seq;
      try {
        const [tr, er] = await Promise.all([
          api('GET', `/api/tasks/${id}`),
          api('GET', `/api/events?team=${enc(state.team)}&task=${id}&limit=200`)]);
        if (seq !== drawer.seq || drawer.id !== id) return;
        drawer.task = tr.task;
        drawer.history = er.events;
        render();
      } catch (e) {
        if (seq === drawer.seq && drawer.id === id) hd.say('#drawer-msg', e.message, 'error');
      }
    }, 40);
  }

  function show(el, on) {
    el.hidden = !on;
  }

  // A task named by id: "#3 Write docs (completed)", a button opening it.
  function taskRef(id) {
    const t = taskById(id);
    return h('li', null, h('button', {type: 'button', class: 'task-link', 'data-task-id': id,
      onclick: () => openTask(id, drawer.opener)},
    h('span', {class: 'task-id'}, `#${id}`), ' ', t ? t.subject : '',
    t ? h('span', {class: 'dep-status s-' + t.status}, COLUMN[t.status] || t.status) : null));
  }

  function render() {
    const t = drawer.task;
    if (!dr || drawer.id === null) return;
    markOpen();
    document.dispatchEvent(new CustomEvent('huddle:drawer',
      {detail: {task: t, section: dr.verify, act: drawerAct, refresh}}));
    if (!t) {
      dr.title.textContent = `#${drawer.id}`;
      return;
    }
    dr.el.dataset.status = t.status;
    dr.title.replaceChildren(h('span', {class: 'task-id'}, `#${t.id}`), ' ', t.subject);
    const facts = [
      h('div', {class: 'fact-row'},
        h('span', {class: 'status-pill drawer-status s-' + t.status}, COLUMN[t.status] || t.status),
        t.owner ? h('span', {class: 'owner', title: 'owner'}, avatar(t.owner, 'sm'),
          h('span', {class: 'owner-name'}, t.owner)) : h('span', {class: 'muted'}, 'No owner'),
        t.priority ? h('span', {class: 'prio', title: 'priority'}, `P${t.priority}`) : null),
      h('p', {class: 'muted fact-sub'}, `Created by ${t.created_by === 'user' ? 'you' : t.created_by || 'someone'} `,
        timeEl(t.created_at)),
      t.description ? h('p', {class: 'drawer-desc'}, t.description) : null,
      t.result != null ? h('div', {class: 'drawer-outcome ok'}, h('strong', null, 'Result: '), t.result) : null,
      t.reason != null ? h('div', {class: 'drawer-outcome bad'}, h('strong', null, 'Reason: '), t.reason) : null,
    ];
    dr.facts.replaceChildren(...facts.filter(Boolean));

    // what its status allows (board.c): the rest is hidden
    const s = t.status;
    show(dr.assign, s === 'pending');
    show(dr.el.querySelector('#drawer-start'), s === 'claimed');
    show(dr.el.querySelector('#drawer-release'), OPEN.includes(s));
    show(dr.el.querySelector('#drawer-retry'), s === 'failed');
    show(dr.el.querySelector('#drawer-cancel'), s === 'pending' || OPEN.includes(s));
    show(dr.complete, OPEN.includes(s));
    show(dr.fail, OPEN.includes(s));
    dr.final.textContent = s === 'completed' || s === 'cancelled'
      ? `A ${s} task moves no further; comments and links still work.` : '';
    fillSelect(dr.el.querySelector('#drawer-agent'), state.agents.map((a) =>
      [a.id, a.role ? `${a.id} (${a.role})` : a.id]), null);
    const deps = new Set(t.depends_on || []);
    fillSelect(dr.el.querySelector('#drawer-dep'),
      state.tasks.filter((x) => x.id !== t.id && !deps.has(x.id))
        .sort((a, b) => a.id - b.id).map((x) => [String(x.id), `#${x.id} ${x.subject}`]),
      'a task…');

    const blocked = new Set(t.blocked_by || []);
    dr.deps.replaceChildren(...[
      h('div', {class: 'dep-group', id: 'drawer-depends-on'},
        h('h4', null, 'Depends on'),
        deps.size ? h('ul', {class: 'dep-list'}, [...deps].map(taskRef))
          : h('p', {class: 'muted'}, 'Nothing.'),
        blocked.size ? h('p', {class: 'blocked-by'},
          'Blocked by ' + [...blocked].map((x) => '#' + x).join(', ')) : null),
      h('div', {class: 'dep-group', id: 'drawer-dependents'},
        h('h4', null, 'Needed by'),
        (t.dependents || []).length ? h('ul', {class: 'dep-list'}, t.dependents.map(taskRef))
          : h('p', {class: 'muted'}, 'No task waits for this one.')),
      t.parent_id != null ? h('div', {class: 'dep-group'},
        h('h4', null, 'Subtask of'), h('ul', {class: 'dep-list'}, taskRef(t.parent_id))) : null,
      (t.children || []).length ? h('div', {class: 'dep-group'},
        h('h4', null, 'Subtasks'), h('ul', {class: 'dep-list'}, t.children.map(taskRef))) : null,
    ].filter(Boolean));

    const comments = t.comments || [];
    dr.comments.replaceChildren(...(comments.length ? comments.map((c) =>
      h('li', {class: 'drawer-comment', 'data-comment-id': c.id},
        h('div', {class: 'comment-head'},
          c.author === 'user' ? h('span', {class: 'author'}, 'You')
            : [avatar(c.author, 'sm'), h('span', {class: 'author'}, c.author)],
          timeEl(c.created_at)),
        h('div', {class: 'comment-body'}, c.body)))
      : [h('li', {class: 'muted'}, 'No comments yet.')]));

    dr.history.replaceChildren(...(drawer.history.length ? drawer.history.map((ev) =>
      h('li', {class: 'history-item', 'data-kind': ev.kind, 'data-seq': ev.seq},
        timeEl(ev.ts, true), ' ',
        h('span', {class: 'kind'}, ev.kind), ' ',
        ev.agent_id ? h('span', {class: 'agent-ref'}, ev.agent_id) : null, ' ',
        h('span', {class: 'history-detail'}, hd.eventDetail(ev))))
      : [h('li', {class: 'muted'}, 'No events yet.')]));
  }

  // Options [value, text] into a select, keeping what was chosen.
  function fillSelect(sel, options, placeholder) {
    const cur = sel.value;
    const opts = options.map(([v, text]) => h('option', {value: v, selected: v === cur}, text));
    if (placeholder) opts.unshift(h('option', {value: '', selected: !cur}, placeholder));
    sel.replaceChildren(...opts);
  }

  function markOpen() {
    for (const card of document.querySelectorAll('.card[data-task-id]')) {
      card.classList.toggle('is-open', Number(card.dataset.taskId) === drawer.id);
    }
  }

  // One action from the drawer; its answer is the task as it is now.
  async function drawerAct(action, body, form) {
    const id = drawer.id;
    const ctl = form ? form.querySelectorAll('button, input, textarea, select')
      : dr.buttons.querySelectorAll('button');
    for (const c of ctl) c.disabled = true;
    hd.say('#drawer-msg', '');
    try {
      const r = await act(id, action, body);
      if (drawer.id === id && r && r.task) {
        drawer.task = Object.assign({}, drawer.task, r.task);
        render();
      }
      if (form) form.reset();
      refresh();
    } catch (e) {
      if (drawer.id === id) hd.say('#drawer-msg', e.message, 'error');
    } finally {
      for (const c of ctl) c.disabled = false;
    }
  }

  function onAssign(e) {
    e.preventDefault();
    const agent = dr.el.querySelector('#drawer-agent').value;
    if (agent) drawerAct('assign', {agent}, e.target);
  }

  function onComplete(e) {
    e.preventDefault();
    const result = dr.el.querySelector('#drawer-result').value.trim();
    drawerAct('complete', result ? {result} : {}, e.target);
  }

  function onFail(e) {
    e.preventDefault();
    const reason = dr.el.querySelector('#drawer-reason').value.trim();
    drawerAct('fail', reason ? {reason} : {}, e.target);
  }

  function onLink(e) {
    e.preventDefault();
    const dep = Number(dr.el.querySelector('#drawer-dep').value);
    if (dep > 0) drawerAct('link', {depends_on: dep}, e.target);
  }

  function onComment(e) {
    e.preventDefault();
    const text = dr.el.querySelector('#drawer-comment-text').value;
    if (text.trim()) drawerAct('comment', {body: text}, e.target);
  }

  // ---- wiring --------------------------------------------------------------

  // Cards can be dragged, focused and opened (4).
  function decorate() {
    for (const card of document.querySelectorAll('#board .card[data-task-id], #col-cancelled .card[data-task-id]')) {
      card.draggable = true;
      card.tabIndex = 0;
      card.title = 'Open for details and actions; drag to another column to move it';
    }
    if (drawer.id !== null) render();
  }

  document.addEventListener('click', (e) => {
    const card = boardCard(e.target);
    if (card) openTask(Number(card.dataset.taskId), card);
  });
  document.addEventListener('keydown', (e) => {
    const card = boardCard(e.target);
    if (!card || e.target !== card || (e.key !== 'Enter' && e.key !== ' ')) return;
    e.preventDefault();
    openTask(Number(card.dataset.taskId), card);
  });
  document.addEventListener('huddle:board', decorate);
  document.addEventListener('huddle:team', () => {
    closeDrawer();
    sayBoard('');
  });
  // The stream names the open task, or a task that now depends on it.
  document.addEventListener('huddle:event', (e) => {
    const ev = e.detail;
    if (drawer.id === null || !ev) return;
    if (ev.task_id === drawer.id || (ev.kind === 'dep_linked' && ev.data && ev.data.depends_on === drawer.id)) {
      refresh();
    }
  });

  decorate();
})();
