// verify.js -- a task's verification in the task drawer: its gate and
// critic, the run (state, attempts, the gate's exit and output, the error
// of a failed run), the last verdict, and the user's own verdict. Loaded
// after board.js, whose drawer sends huddle:drawer after each drawing
// (board.js (3)); window.huddle (app.js) gives h() and say().
//
//  (1) The section (#drawer-verify, board.js's node) shows only for a
//      task with a `verify` object (GET /api/tasks/:id, docs/verification.md
//      "What is recorded"); for any other task, or while the task is
//      being read, it is hidden. It is drawn from the task the drawer
//      holds, so it is live as the drawer is: the drawer reads the task
//      again whenever the stream names it (verify_* and status_changed
//      events carry the task), then sends huddle:drawer. A throwaway
//      critic leaves after its run's last event, in an agent_removed
//      event that names no task: that event, for the critic shown, reads
//      the task again too (refresh(), board.js's), so its name goes.
//  (2) The critic is the member, or "a fresh <runtime> agent per check"
//      with the current run's throwaway member (run_critic) while there
//      is one; without a critic a passing gate approves, and it says so.
//  (3) Acting is the drawer's: act(action, body, form) posts
//      /api/tasks/:id/<action> as the user (board.js (1)), disables the
//      form's controls while it waits, clears the form on success and
//      shows the server's refusal in the drawer's message line
//      (#drawer-msg). Approve and Reject (POST .../verdict) show for a task
//      in verifying; Reject sends the reasons as typed, so an empty one
//      is the server's to refuse (its 400 message is what the user
//      reads). "Verify again" (POST .../verify) shows when the run failed.
//  (4) The forms are built once and only shown or hidden, so a redraw
//      never loses reasons being typed; they are cleared when the drawer
//      opens another task. Every control has a label; the gate's output
//      is a focusable, scrollable <pre> (its own scrollbar, wrapped lines:
//      nothing scrolls the drawer sideways at 390 px).
//  (5) Data never reaches markup: every node comes from h(), server text
//      becomes text nodes.
'use strict';

(() => {
  const hd = window.huddle;
  if (!hd) return;
  const {h} = hd;

  const RUN = {
    idle: 'idle', queued: 'queued: the verifier takes it next', running: 'running',
    failed: 'failed: the task stays verifying until it is verified again or given a verdict',
  };
  let v = null; // the section's nodes, built on first use (4)
  let shownId = null; // the task the forms were last shown for
  let act = null; // the drawer's act() (3)
  let refresh = null; // the drawer's refresh() (1)
  let runCritic = null; // the throwaway critic shown (1)

  const who = (name) => (name === 'user' ? 'you' : name);
  const seconds = (n) => (Number.isInteger(n) && n > 0 ? `${n} s` : null);

  function build(section) {
    const reasons = h('textarea', {id: 'verify-reasons', rows: 2, maxlength: 10000,
      placeholder: 'What must change (required to reject)'});
    v = {
      section,
      facts: h('dl', {id: 'verify-facts', class: 'verify-facts'}),
      outputHead: h('h4', {id: 'verify-output-h', class: 'verify-sub'}, 'Gate output'),
      output: h('pre', {id: 'verify-output', class: 'verify-output', tabindex: 0,
        'aria-labelledby': 'verify-output-h'}),
      verdictForm: h('form', {id: 'verify-verdict-form', class: 'drawer-form verify-form',
        onsubmit: (e) => e.preventDefault()},
      h('label', {for: 'verify-reasons', class: 'verify-label'}, 'Your verdict: reasons'),
      reasons,
      h('div', {class: 'verify-buttons'},
        h('button', {id: 'verify-approve', type: 'button', class: 'btn primary',
          onclick: () => verdict('approve')}, 'Approve'),
        h('button', {id: 'verify-reject', type: 'button', class: 'btn danger',
          onclick: () => verdict('reject')}, 'Reject'))),
      againForm: h('form', {id: 'verify-again-form', class: 'inline-form',
        onsubmit: (e) => {
          e.preventDefault();
          if (act) act('verify', {}, v.againForm);
        }},
      h('button', {id: 'verify-again', type: 'submit', class: 'btn'}, 'Verify again')),
      reasons,
    };
    section.replaceChildren(h('h3', null, 'Verification'), v.facts, v.outputHead, v.output, v.verdictForm, v.againForm);
  }

  function verdict(kind) {
    if (!act) return;
    const body = {verdict: kind};
    const text = v.reasons.value.trim();
    if (text) body.reasons = text;
    act('verdict', body, v.verdictForm);
  }

  function row(key, label, ...value) {
    return [h('dt', null, label), h('dd', {'data-key': key}, ...value)];
  }

  function gateRow(x) {
    if (!x.gate) return row('gate', 'Gate', h('span', {class: 'muted'}, 'None: the critic alone decides.'));
    const where = x.workdir ? ['in ', h('code', null, x.workdir)] : 'in the owner’s workdir';
    const within = seconds(x.gate_timeout_s);
    return row('gate', 'Gate', h('code', {class: 'verify-cmd'}, x.gate), ' ', where,
      within ? `, within ${within}` : '');
  }

  function criticRow(x) {
    const within = seconds(x.critic_timeout_s);
    const tail = within ? `, within ${within}` : '';
    if (x.critic) return row('critic', 'Critic', h('span', {class: 'agent-ref'}, x.critic), tail);
    if (x.critic_runtime) {
      return row('critic', 'Critic', `a fresh ${x.critic_runtime} agent per check`, tail,
        x.run_critic ? ['; this run’s: ', h('span', {class: 'agent-ref', id: 'verify-run-critic'},
          x.run_critic)] : '');
    }
    return row('critic', 'Critic', h('span', {class: 'muted'}, 'None: a passing gate approves.'));
  }

  function draw(t, section) {
    const x = t && t.verify;
    runCritic = x ? x.run_critic || null : null;
    if (!x) {
      section.hidden = true;
      return;
    }
    if (!v || v.section !== section) build(section);
    if (shownId !== t.id) {
      shownId = t.id;
      v.verdictForm.reset();
    }
    section.hidden = false;
    section.dataset.state = x.state || '';
    const attempts = Number.isInteger(x.attempts) && x.attempts > 0
      ? ` (${x.attempts === 1 ? '1 attempt' : `${x.attempts} attempts`})` : '';
    const rows = [
      gateRow(x),
      criticRow(x),
      row('state', 'Run', RUN[x.state] || x.state || 'idle', attempts,
        x.state === 'running' && x.started_at ? [', since ', hd.timeEl(x.started_at)] : ''),
    ];
    if (Number.isInteger(x.gate_exit)) {
      rows.push(row('gate_exit', 'Gate exit', String(x.gate_exit),
        x.gate_exit === 0 ? ' (passed)' : ' (failed)'));
    }
    if (x.error) rows.push(row('error', 'Error', h('span', {class: 'verify-error'}, x.error)));
    if (x.verdict) {
      rows.push(row('verdict', 'Last verdict',
        h('strong', null, x.verdict === 'approve' ? 'Approved' : 'Rejected'),
        x.verdict_by ? ` by ${who(x.verdict_by)}` : '',
        x.reasons ? [': ', h('span', {class: 'verify-reasons'}, x.reasons)] : ''));
    }
    v.facts.replaceChildren(...rows.flat());
    v.output.hidden = x.gate_output == null || x.gate_output === '';
    v.outputHead.hidden = v.output.hidden;
    if (v.output.textContent !== (x.gate_output || '')) v.output.textContent = x.gate_output || '';
    v.verdictForm.hidden = t.status !== 'verifying';
    v.againForm.hidden = !(t.status === 'verifying' && x.state === 'failed');
  }

  document.addEventListener('huddle:drawer', (e) => {
    const d = e.detail;
    if (!d || !d.section) return;
    act = d.act;
    refresh = d.refresh;
    draw(d.task, d.section);
  });
  document.addEventListener('huddle:event', (e) => {
    const ev = e.detail;
    if (ev && ev.kind === 'agent_removed' && runCritic && ev.agent_id === runCritic && refresh) refresh();
  });
})();
