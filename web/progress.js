// progress.js -- the dashboard's progress and cancel:
//  (1) every agent card that shows a working indicator
//      (.working-time[data-since], rendered by app.js from the agent's
//      turn_started_at, or the agent_status event's time) gets its elapsed
//      time written again every second: "working 12s", "working 1m 05s";
//  (2) Cancel on a running conversation ([data-cancel-conversation], in the
//      Ask the team panel) posts /api/conversations/<id>/cancel; on a
//      running exchange (#exchange-cancel) posts
//      /api/teams/<team>/exchange/cancel. The end itself arrives as the
//      page already learns it (the conversation_cancelled event, the
//      exchange's own answer), so the buttons only ask.
// app.js hands over what it owns once, at boot: HuddleProgress.init({api,
// team, say, loadConversation}). Text goes in as text; no markup is built
// from data.
'use strict';

window.HuddleProgress = (() => {
  let deps = null;

  function elapsed(since) {
    const s = Math.max(0, Math.floor((Date.now() - since) / 1000));
    if (s < 60) return `${s}s`;
    const m = Math.floor(s / 60);
    return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  }

  // (1): the card re-renders often; whatever is there now is updated
  function tick() {
    for (const el of document.querySelectorAll('.working-time[data-since]')) {
      const since = Number(el.dataset.since);
      if (since > 0) el.textContent = `working ${elapsed(since)}`;
    }
  }

  async function cancelConversation(btn) {
    const id = btn.dataset.cancelConversation;
    btn.disabled = true;
    btn.textContent = 'Cancelling…';
    try {
      await deps.api('POST', `/api/conversations/${encodeURIComponent(id)}/cancel`);
      deps.loadConversation(id);
    } catch (e) {
      deps.say('#ask-msg', e.message, 'error');
      btn.disabled = false;
      btn.textContent = 'Cancel';
    }
  }

  async function cancelExchange(btn) {
    btn.disabled = true;
    btn.textContent = 'Cancelling…';
    try {
      await deps.api('POST', `/api/teams/${encodeURIComponent(deps.team())}/exchange/cancel`);
    } catch (e) {
      deps.say('#exchange-msg', e.message, 'error');
      btn.disabled = false;
      btn.textContent = 'Cancel';
    }
  }

  // (2): one listener for every button, whenever it was rendered
  function onClick(ev) {
    const conv = ev.target.closest('[data-cancel-conversation]');
    if (conv && !conv.disabled) cancelConversation(conv);
    else if (ev.target.closest('#exchange-cancel')) {
      const btn = document.getElementById('exchange-cancel');
      if (!btn.disabled) cancelExchange(btn);
    }
  }

  // The exchange's Cancel shows while one runs (app.js says when).
  function exchangeRunning(on) {
    const btn = document.getElementById('exchange-cancel');
    if (!btn) return;
    btn.hidden = !on;
    btn.disabled = false;
    btn.textContent = 'Cancel';
  }

  function init(d) {
    deps = d;
    document.addEventListener('click', onClick);
    setInterval(tick, 1000);
  }

  return {init, tick, elapsed, exchangeRunning};
})();
