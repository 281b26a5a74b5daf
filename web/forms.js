// forms.js -- creating a team and adding an agent from the page. Loaded
// after app.js, whose window.huddle it uses.
//
//  (1) Each form is a modal <dialog> built once; a refusal keeps it open
//      with what was typed and the server's "error" under the fields, so
//      bad input loses nothing.
//  (2) The runtimes offered are the server's (GET /api/runtimes, the
//      adapter table of this build), as suggestions: a name the build
//      does not have is still sent, and the server's refusal says which
//      ones it has.
//  (3) An agent's runtime config is JSON typed in a textarea. Text that
//      does not parse is refused here, with the parser's message, before
//      anything is sent; JSON of the wrong shape goes to the server, whose
//      runtime adapter names the field it refuses.
//  (4) Writes act as the user; no request names an actor. Nodes come from
//      h() only (createElement and text).
//  (5) The modal dialogs keep focus inside (app.js's trap, the browser's
//      inert page), close with Escape, and the browser gives focus back
//      to the button that opened them.
'use strict';

(() => {
  const hd = window.huddle;
  if (!hd) return;
  const {api, h, state, enc} = hd;

  function row(id, label, control, hint) {
    return h('div', {class: 'form-row'},
      h('label', {for: id}, label),
      control,
      hint ? h('p', {class: 'hint', id: id + '-hint'}, hint) : null);
  }

  // A modal form: fields, a message line, Cancel and a submit button.
  // onSubmit(form) resolves true when the dialog may close.
  function formDialog(id, title, submitText, fields, onSubmit) {
    const msg = h('p', {class: 'form-msg', role: 'alert', id: id + '-msg'});
    const submit = h('button', {type: 'submit', class: 'btn primary'}, submitText);
    const form = h('form', {class: 'dialog-form', autocomplete: 'off'},
      h('h2', {id: id + '-title'}, title),
      fields,
      msg,
      h('div', {class: 'dialog-buttons'},
        h('button', {type: 'button', class: 'btn', onclick: () => dlg.close()}, 'Cancel'),
        submit));
    const dlg = h('dialog', {id, class: 'hd-dialog', 'aria-labelledby': id + '-title'}, form);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      submit.disabled = true;
      hd.say('#' + msg.id, '');
      try {
        if (await onSubmit(form)) {
          form.reset();
          dlg.close();
        }
      } catch (err) {
        hd.say('#' + msg.id, err.message, 'error');
      } finally {
        submit.disabled = false;
      }
    });
    document.body.append(dlg);
    return dlg;
  }

  const value = (form, name) => form.elements[name].value.trim();

  // ---- a new team ----------------------------------------------------------

  let teamDlg = null;
  function teamDialog() {
    if (teamDlg) return teamDlg;
    teamDlg = formDialog('team-dialog', 'New team', 'Create team', [
      row('team-new-id', 'Id', h('input', {id: 'team-new-id', name: 'id', required: true,
        maxlength: 50, placeholder: 'e.g. web-team'}),
      'Lower-case letters, digits, - and _: it names the team in URLs and commands.'),
      row('team-new-name', 'Name', h('input', {id: 'team-new-name', name: 'name', maxlength: 200,
        placeholder: 'e.g. Web team'})),
      row('team-new-description', 'Description (optional)', h('textarea', {id: 'team-new-description',
        name: 'description', rows: 2})),
    ], async (form) => {
      const body = {id: value(form, 'id')};
      if (value(form, 'name')) body.name = value(form, 'name');
      if (value(form, 'description')) body.description = value(form, 'description');
      const r = await api('POST', '/api/teams', body);
      await hd.loadTeams();
      hd.selectTeam(r.team.id, true);
      return true;
    });
    return teamDlg;
  }

  // ---- an agent in the team on screen --------------------------------------

  let agentDlg = null;
  let runtimes = null;

  async function loadRuntimes() {
    if (runtimes) return;
    try {
      const r = await api('GET', '/api/runtimes');
      runtimes = r.runtimes;
    } catch (e) {
      hd.say('#agent-dialog-msg', `The runtimes could not be listed: ${e.message}`, 'warn');
      return;
    }
    document.getElementById('agent-runtimes').replaceChildren(...runtimes.map((rt) =>
      h('option', {value: rt.name}, rt.scripted ? `${rt.label} (canned replies)` : rt.label)));
    document.getElementById('agent-new-runtime-hint').textContent =
      `This server runs ${runtimes.map((rt) => rt.name).join(', ')}.`;
  }

  function agentDialog() {
    if (agentDlg) return agentDlg;
    agentDlg = formDialog('agent-dialog', 'Add agent', 'Add agent', [
      row('agent-new-id', 'Id', h('input', {id: 'agent-new-id', name: 'id', required: true,
        maxlength: 50, placeholder: 'e.g. writer'})),
      row('agent-new-name', 'Name (optional)', h('input', {id: 'agent-new-name', name: 'name',
        maxlength: 200})),
      row('agent-new-role', 'Role (optional)', h('input', {id: 'agent-new-role', name: 'role',
        maxlength: 200, placeholder: 'e.g. technical writer'})),
      row('agent-new-runtime', 'Runtime', [h('input', {id: 'agent-new-runtime', name: 'runtime',
        required: true, list: 'agent-runtimes', value: 'scripted'}),
      h('datalist', {id: 'agent-runtimes'})], ' '),
      row('agent-new-config', 'Runtime config (JSON, optional)', h('textarea', {id: 'agent-new-config',
        name: 'config', rows: 5, spellcheck: 'false', class: 'mono',
        placeholder: '{"default": "On it."}'})),
      h('div', {class: 'form-row check'},
        h('input', {id: 'agent-new-leader', name: 'leader', type: 'checkbox'}),
        h('label', {for: 'agent-new-leader'}, 'Team leader')),
    ], async (form) => {
      const body = {id: value(form, 'id'), runtime: value(form, 'runtime')};
      if (value(form, 'name')) body.name = value(form, 'name');
      if (value(form, 'role')) body.role = value(form, 'role');
      if (form.elements.leader.checked) body.leader = true;
      const text = value(form, 'config');
      if (text) {
        try {
          body.runtime_config = JSON.parse(text);
        } catch (e) {
          hd.say('#agent-dialog-msg', `The runtime config is not valid JSON: ${e.message}`, 'error');
          form.elements.config.focus();
          return false;
        }
      }
      await api('POST', `/api/teams/${enc(state.team)}/agents`, body);
      hd.loadAgents();
      return true;
    });
    return agentDlg;
  }

  // New team: in the top bar, and in the first steps a page without a
  // team shows (app.js (7)).
  const newTeam = () => {
    const dlg = teamDialog();
    hd.say('#team-dialog-msg', '');
    dlg.showModal();
  };
  document.getElementById('new-team').addEventListener('click', newTeam);
  document.getElementById('no-teams-new').addEventListener('click', newTeam);
  document.getElementById('add-agent').addEventListener('click', () => {
    if (!state.team) return;
    const dlg = agentDialog();
    dlg.querySelector('h2').textContent = `Add an agent to ${state.team}`;
    hd.say('#agent-dialog-msg', '');
    dlg.showModal();
    loadRuntimes();
  });
})();
