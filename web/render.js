// render.js -- how the dashboard says things: agents' replies as Markdown
// with their tags as chips, money, and each event as a sentence. Loaded
// before app.js (index.html, all `defer`, so in order); app.js uses the
// one global it defines, `huddleRender`.
//
// Invariants:
//  (1) Agent text is the only text that becomes markup, and only here:
//      marked (web/vendor, pinned) turns it into HTML with every raw HTML
//      token escaped, so `<script>` in a reply is shown as the text
//      `<script>`; DOMPurify then keeps only TAGS and ATTRS below, links
//      only to http:, https: and mailto:, and hands back a fragment that
//      was never attached to the page. Nothing else in the dashboard
//      parses a string as HTML.
//  (2) Reply tags (`[@coder: ...]`, `[#team: ...]`, `[send_file: ...]`,
//      the grammar of src/engine/mentions.c and conv_files.c) are taken
//      out of the text before Markdown sees it, each replaced by a
//      private-use placeholder, and put back as chip elements built with
//      createElement; a tag's text is never Markdown.
//  (3) Nothing here writes "null" or "undefined": an absent field is left
//      out of the sentence, never printed.
//  (4) Works under the page's CSP (script-src 'self', style-src 'self'):
//      no inline styles or handlers; neither library evaluates strings.
//  (5) marked and DOMPurify are loaded on demand (ready(), from this
//      server's /assets/vendor/), not with the page: app.js asks for them
//      when it first draws the room or a conversation.
'use strict';

(() => {
  // ---- elements ------------------------------------------------------------

  function el(tag, cls, ...kids) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    for (const k of kids.flat()) {
      if (k === undefined || k === null || k === false || k === '') continue;
      e.append(k instanceof Node ? k : String(k));
    }
    return e;
  }

  // ---- money -----------------------------------------------------------------

  // $ rounded to cents; "< $0.01" below a cent; "$0" for nothing. The
  // exact value is the title.
  function moneyText(usd) {
    if (typeof usd !== 'number' || !Number.isFinite(usd) || usd === 0) return '$0';
    if (Math.abs(usd) < 0.005) return usd < 0 ? '> -$0.01' : '< $0.01';
    return (usd < 0 ? '-$' : '$') + Math.abs(usd).toFixed(2);
  }

  function moneyExact(usd) {
    if (typeof usd !== 'number' || !Number.isFinite(usd)) return '$0';
    // enough digits for a microcent, no trailing zeros
    return '$' + usd.toFixed(6).replace(/\.?0+$/, '');
  }

  function money(usd, cls) {
    const e = el('span', 'money' + (cls ? ' ' + cls : ''), moneyText(usd));
    e.title = moneyExact(usd);
    return e;
  }

  // ---- reply tags (2) --------------------------------------------------------

  const ID = /[A-Za-z0-9_-]/;

  // close[i] = the index of the ']' balancing the '[' at i, or -1.
  function matchBrackets(text) {
    const close = new Map();
    const stack = [];
    for (let i = 0; i < text.length; i++) {
      if (text[i] === '[') stack.push(i);
      else if (text[i] === ']' && stack.length) close.set(stack.pop(), i);
    }
    return close;
  }

  // After `[@` (or `[#`) at i: the ids and the colon's index, or null.
  function readIds(text, i, many) {
    const ids = [];
    let p = i + 2;
    for (;;) {
      while (text[p] === ' ' || text[p] === '\t') p++;
      const start = p;
      while (p < text.length && ID.test(text[p])) p++;
      if (p === start) return null;
      ids.push(text.slice(start, p).toLowerCase());
      while (text[p] === ' ' || text[p] === '\t') p++;
      if (text[p] === ':') return {ids, colon: p};
      if (!many || text[p] !== ',') return null;
      p++;
    }
  }

  // The tags of text, in order, outermost only: {kind, ids, body, start, end}.
  function replyTags(text) {
    const close = matchBrackets(text);
    const tags = [];
    for (let i = 0; i < text.length; i++) {
      if (text[i] !== '[' || !close.has(i)) continue;
      const end = close.get(i);
      let tag = null;
      if (text[i + 1] === '@') {
        const r = readIds(text, i, true);
        if (r && r.colon < end) tag = {kind: 'mention', ids: r.ids, colon: r.colon};
      } else if (text[i + 1] === '#') {
        const r = readIds(text, i, false);
        if (r && r.colon < end) tag = {kind: 'room', ids: r.ids, colon: r.colon};
      } else if (text.startsWith('[send_file:', i)) {
        tag = {kind: 'file', ids: [], colon: i + 10};
      }
      if (!tag) continue;
      tag.body = text.slice(tag.colon + 1, end).trim();
      tag.start = i;
      tag.end = end + 1;
      tags.push(tag);
      i = end;
    }
    return tags;
  }

  // A tag as a chip: who (or where) it goes, then its text.
  function chip(tag, hueOf) {
    let c;
    if (tag.kind === 'mention') {
      c = el('span', 'chip chip-mention',
        el('span', 'chip-to', '→ ' + tag.ids.map((x) => '@' + x).join(', ')));
      c.dataset.to = tag.ids.join(',');
      if (hueOf) c.style.setProperty('--hue', String(hueOf(tag.ids[0])));
      c.title = `a message for ${tag.ids.join(', ')}`;
    } else if (tag.kind === 'room') {
      c = el('span', 'chip chip-room', el('span', 'chip-to', '# ' + tag.ids[0]));
      c.dataset.to = tag.ids[0];
      c.title = `a post in the room of team ${tag.ids[0]}`;
    } else {
      c = el('span', 'chip chip-file', el('span', 'chip-to', '\u{1F4CE} file'));
      c.title = 'a file to attach';
    }
    if (tag.body) c.append(' ', el('span', 'chip-body', tag.body));
    return c;
  }

  // ---- Markdown (1) ----------------------------------------------------------

  const TAGS = ['p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li',
    'blockquote', 'pre', 'code', 'em', 'strong', 'del', 's', 'a', 'table', 'thead',
    'tbody', 'tr', 'th', 'td'];
  const ATTRS = ['href', 'title', 'start', 'align'];
  const URI = /^(?:https?:|mailto:)/i;
  const PH_OPEN = '\uE000';
  const PH_CLOSE = '\uE001';
  const PH = /\uE000(\d+)\uE001/g;

  const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

  let md = null;
  function markedInstance() {
    if (md) return md;
    md = new window.marked.Marked({
      gfm: true,
      breaks: true,
      async: false,
      renderer: {
        // raw HTML from an agent is text, never markup
        html(token) {
          const text = esc(token.text || token.raw || '');
          return token.block ? `<p>${text.replace(/\n/g, '<br>')}</p>\n` : text;
        },
      },
    });
    // links open elsewhere and tell nothing about the page
    window.DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A' && node.hasAttribute('href')) {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer');
      }
    });
    return md;
  }

  function available() {
    return !!(window.marked && window.marked.Marked && window.DOMPurify &&
      window.DOMPurify.isSupported);
  }

  // (5) The libraries are not in the page's first load: ready() adds them
  // (once; both at once) and settles when both have loaded or failed;
  // loaded() says it has settled. A reply drawn before that, or after
  // they failed to load, is its text with its chips: nothing is lost.
  const VENDOR = ['/assets/vendor/marked.umd.js', '/assets/vendor/purify.min.js'];
  let loading = null;
  let settled = false;
  function ready() {
    if (!loading) {
      loading = available() ? Promise.resolve() : Promise.all(VENDOR.map((src) => new Promise((done) => {
        const s = document.createElement('script');
        s.src = src;
        s.async = false;
        s.onload = s.onerror = () => done();
        document.head.append(s);
      }))).then(() => undefined);
      loading.then(() => { settled = true; });
    }
    return loading;
  }

  function loaded() {
    return settled || available();
  }

  // Put the chips back where their placeholders are (text nodes only, so
  // a placeholder can never become an attribute).
  function placeChips(root, chips) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const hits = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.nodeValue.includes(PH_OPEN)) hits.push(n);
    }
    for (const n of hits) {
      const parts = [];
      let last = 0;
      const s = n.nodeValue;
      for (const m of s.matchAll(PH)) {
        if (m.index > last) parts.push(s.slice(last, m.index));
        // each chip once (a clone would copy its style attribute, which
        // the CSP refuses); a placeholder seen twice stays invisible text
        const c = chips[Number(m[1])];
        chips[Number(m[1])] = null;
        parts.push(c || '');
        last = m.index + m[0].length;
      }
      if (last < s.length) parts.push(s.slice(last));
      n.replaceWith(...parts);
    }
  }

  // Plain @names in text (not in code, links or chips) marked, as the room
  // always marked them.
  const AT = /@[A-Za-z0-9][A-Za-z0-9_-]*/g;
  function markMentions(root, hueOf) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => (n.parentElement && n.parentElement.closest('code, pre, a, .chip')
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    const hits = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      AT.lastIndex = 0;
      if (AT.test(n.nodeValue)) hits.push(n);
    }
    for (const n of hits) {
      const s = n.nodeValue;
      const parts = [];
      let last = 0;
      for (const m of s.matchAll(AT)) {
        if (m.index > last) parts.push(s.slice(last, m.index));
        const span = el('span', 'mention', m[0]);
        if (hueOf) span.style.setProperty('--hue', String(hueOf(m[0].slice(1).toLowerCase())));
        parts.push(span);
        last = m.index + m[0].length;
      }
      if (last < s.length) parts.push(s.slice(last));
      n.replaceWith(...parts);
    }
  }

  // An agent's reply as a fragment: Markdown, sanitized, tags as chips;
  // opts.mentions also marks plain @names. Without the libraries (not
  // loaded yet, or failing to load: (5)) it is the text with its chips,
  // and nothing is lost.
  function reply(text, hueOf, opts) {
    const src = String(text == null ? '' : text).replace(/[\uE000\uE001]/g, '');
    const tags = replyTags(src);
    const chips = tags.map((t) => chip(t, hueOf));
    let withPh = '';
    let last = 0;
    tags.forEach((t, k) => {
      withPh += src.slice(last, t.start) + PH_OPEN + k + PH_CLOSE;
      last = t.end;
    });
    withPh += src.slice(last);
    const frag = document.createDocumentFragment();
    if (!available()) {
      frag.append(withPh);
      placeChips(frag, chips);
      if (opts && opts.mentions) markMentions(frag, hueOf);
      return frag;
    }
    const html = markedInstance().parse(withPh);
    const clean = window.DOMPurify.sanitize(html, {
      ALLOWED_TAGS: TAGS,
      ALLOWED_ATTR: ATTRS,
      ALLOWED_URI_REGEXP: URI,
      ALLOW_DATA_ATTR: false,
      RETURN_DOM_FRAGMENT: true,
    });
    // marked's newlines between blocks are not text of the reply
    for (const n of [...clean.childNodes]) {
      if (n.nodeType === Node.TEXT_NODE && !n.nodeValue.trim()) n.remove();
    }
    placeChips(clean, chips);
    if (opts && opts.mentions) markMentions(clean, hueOf);
    frag.append(clean);
    return frag;
  }

  // ---- events as sentences (3) -----------------------------------------------

  const END_WHY = {
    no_pending_obligation: 'nobody owes a turn on the board',
    max_turns: 'it reached its turn limit',
    budget_paused: 'a budget paused it',
    aborted: 'it was stopped',
    cancelled: 'cancelled by the user',
  };
  const STATUS_WORDS = {
    pending: 'pending', claimed: 'claimed', in_progress: 'in progress', verifying: 'verifying', completed: 'completed',
    failed: 'failed', cancelled: 'cancelled', idle: 'idle', working: 'working', error: 'in error',
    shutdown: 'shut down', shutdown_requested: 'shutting down', active: 'active',
  };
  // the mailbox's message types (src/mailbox/mailbox.c), as a noun
  const MESSAGE_TYPES = {
    message: 'a message', broadcast: 'a broadcast', shutdown_request: 'a shutdown request',
    shutdown_response: 'a shutdown response', idle: 'an idle notice', task_update: 'a task update',
    mention: 'a mention',
  };
  const words = (s) => STATUS_WORDS[s] || (s === undefined || s === null ? 'unknown' : String(s).replace(/_/g, ' '));
  const has = (v) => v !== undefined && v !== null && v !== '';
  const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
  const nth = (d) => (typeof d.turn === 'number' ? `turn ${d.turn}` : 'a turn');

  // The sentence for an exchange's end (the page's end line says the same).
  function endReason(reason) {
    return END_WHY[reason] || (has(reason) ? words(reason) : 'it ended');
  }

  function excerpt(s, n) {
    const t = String(s || '').replace(/\s+/g, ' ').trim();
    return t.length > n ? t.slice(0, n - 1) + '…' : t;
  }

  // ctx: {agent(name) -> Node, task(id, subject or null) -> Node,
  // money(usd) -> Node}.
  // Returns a flat array of strings and nodes; never null or undefined.
  function eventSentence(ev, ctx) {
    return sentence(ev, ctx).flat(Infinity).filter((x) => x !== '' && x !== null && x !== undefined);
  }

  function sentence(ev, ctx) {
    const d = ev.data && typeof ev.data === 'object' ? ev.data : {};
    const who = (x) => (has(x) ? (x === 'user' ? 'you' : ctx.agent(x)) : 'someone');
    const actor = who(ev.agent_id);
    const task = has(ev.task_id) ? ctx.task(ev.task_id, ev.kind === 'task_created' ? d.subject : null) : 'a task';
    const by = (x) => (has(x) && x !== ev.agent_id ? [' (by ', who(x), ')'] : []);
    const q = (s) => `“${excerpt(s, 120)}”`;
    switch (ev.kind) {
      case 'task_created':
        // no agent: a user made it (the CLI or the page, without --as)
        return [has(ev.agent_id) ? actor : 'you', ' created ', task,
          Array.isArray(d.depends_on) && d.depends_on.length
            ? `, waiting for ${d.depends_on.map((x) => '#' + x).join(', ')}` : '',
          d.priority ? ` at priority ${d.priority}` : ''];
      case 'task_claimed':
        if (has(d.by) && d.by !== d.owner) {
          return [who(d.by), ' assigned ', task, ' to ', who(d.owner), d.auto ? ' (automatically)' : ''];
        }
        return [who(d.owner || ev.agent_id), ' claimed ', task, d.auto ? ' (automatically)' : ''];
      case 'status_changed':
        if (d.to === 'completed') return [who(d.by || ev.agent_id), ' completed ', task];
        if (d.to === 'failed') return [task, ' failed', ...by(d.by)];
        if (d.to === 'cancelled') return [task, ' was cancelled', ...by(d.by)];
        return [task, ` went from ${words(d.from)} to ${words(d.to)}`, ...by(d.by)];
      case 'task_reassigned':
        return [task, ' moved from ', who(d.from), ' to ', who(d.to), ...by(d.by)];
      case 'dep_linked':
        return [task, has(d.depends_on) ? ` now waits for #${d.depends_on}` : ' now waits for another task', ...by(d.by)];
      case 'task_comment':
        return [has(d.by) ? who(d.by) : (has(ev.agent_id) ? actor : 'you'), ' commented on ', task];
      case 'team_chat_post':
        if (d.kind === 'user') return ['you posted in the room'];
        if (d.kind === 'system') return ['huddle posted a notice in the room'];
        return [who(d.author || ev.agent_id), ' posted in the room'];
      case 'message_sent':
        return [actor, ` sent ${MESSAGE_TYPES[d.type] || 'a message'} to `,
          who(d.to), has(d.summary) ? `: ${q(d.summary)}` : ''];
      case 'mention_dropped':
        return [who(d.from || ev.agent_id), `’s message for ${d.target || 'a teammate'} was not delivered`,
          has(d.reason) ? `: ${d.reason}` : ''];
      case 'speaker_selected':
        return [`${nth(d)} of the exchange goes to `, who(d.speaker || ev.agent_id),
          has(d.policy) ? ` (${words(d.policy)})` : ''];
      case 'turn_started':
        return [actor, ` started ${nth(d)} of the exchange`];
      case 'turn_completed':
        return [actor, d.failed ? ` failed ${nth(d)} of the exchange` : ` finished ${nth(d)} of the exchange`,
          typeof d.duration_ms === 'number' ? ` in ${(d.duration_ms / 1000).toFixed(1)} s` : ''];
      case 'turn_bound_hit':
        return ['the exchange', has(d.room_id) ? ` in ${String(d.room_id).replace(/^team:/, '')}` : '',
          ` ended after ${plural(d.turns_taken || 0, 'turn', 'turns')}: ${endReason(d.reason)}`,
          d.reason === 'no_pending_obligation' ? ' — ask the team instead' : ''];
      case 'exchange_resumed':
        return ['the exchange', has(d.room_id) ? ` in ${String(d.room_id).replace(/^team:/, '')}` : '',
          ' was interrupted and goes on', typeof d.turns_taken === 'number'
            ? ` after ${plural(d.turns_taken, 'turn', 'turns')}` : ''];
      case 'cost':
        return [actor, '’s turn cost ', ctx.money(d.usd)];
      case 'conversation_started':
        return [who(d.agent || ev.agent_id), ' was asked ', q(d.message)];
      case 'conversation_reply':
        return [who(d.agent || ev.agent_id), d.error ? ' failed to reply' : ' replied', has(d.reply) ? ` ${q(d.reply)}` : '',
          typeof d.pending === 'number' && d.pending > 1 ? ` (${plural(d.pending - 1, 'message', 'messages')} still open)` : ''];
      case 'conversation_completed':
        return [`the team answered with ${plural(d.total_messages || 0, 'reply', 'replies')}`];
      case 'conversation_cancelled':
        return [`the conversation was cancelled after ${plural(d.total_messages || 0, 'reply', 'replies')}`,
          has(d.by) ? [' by ', who(d.by)] : '',
          typeof d.pending === 'number' && d.pending > 0 ? ` (${plural(d.pending, 'message', 'messages')} unanswered)` : ''];
      case 'conversation_resumed':
        return ['a conversation was taken over and goes on',
          d.requeued ? ` (${plural(d.requeued, 'message', 'messages')} asked again)` : ''];
      case 'agent_status':
        return [actor, ` is ${words(d.to)}`, has(d.from) ? ` (was ${words(d.from)})` : '',
          has(d.reason) ? `: ${d.reason}` : ''];
      case 'agent_added':
        return [actor, ' joined the team', d.leader ? ' as its leader' : '',
          has(d.runtime) ? ` (${d.runtime})` : ''];
      case 'agent_removed': return [actor, ' left the team'];
      case 'agent_updated': return [actor, '’s settings changed'];
      case 'agent_replaced': return [actor, ' replaced ', who(d.replaces), ...by(d.by)];
      case 'team_created': return [`the team${has(d.name) ? ' ' + q(d.name) : ''} was created`];
      case 'team_updated': {
        const keys = Object.keys(d);
        return [`the team’s settings changed${keys.length ? ': ' + keys.map(words).join(', ') : ''}`];
      }
      case 'team_removed': return ['the team was removed'];
      case 'team_status': return [`the team is ${words(d.to)}`, has(d.from) ? ` (was ${words(d.from)})` : ''];
      case 'team_autorun':
        return [`autorun is ${d.on ? (d.paused ? 'on but paused' : 'on') : 'off'}`];
      case 'shutdown_requested':
        return [actor, ' asked the team to shut down', has(d.reason) ? `: ${d.reason}` : ''];
      case 'shutdown_approved': return [actor, ' agreed to shut down'];
      case 'shutdown_aborted':
        return ['the shutdown was called off', has(d.reason) ? `: ${d.reason}` : ''];
      case 'shutdown_completed': return ['the team shut down'];
      case 'budget_set':
        return [`a ${has(d.mode) ? d.mode + ' ' : ''}budget of `, ctx.money((d.limit_cents || 0) / 100),
          ` was set for ${has(d.scope) ? words(d.scope) : 'the team'}${has(d.subject) ? ' ' + d.subject : ''}`];
      case 'budget_exceeded':
        return [`${has(d.scope) ? words(d.scope) : 'the team'}${has(d.subject) ? ' ' + d.subject : ''} went over its budget of `,
          ctx.money((d.limit_cents || 0) / 100), d.mode === 'cap' ? ' and is paused' : ''];
      case 'error': return ['error: ', has(d.message) ? d.message : 'no details'];
      case 'tool_call':
        if (d.phase === 'result') return [actor, d.error ? '’s tool call failed: ' : '’s tool call returned: ', d.name || 'a tool'];
        return [actor, ' called ', d.name || 'a tool'];
      case 'session_reset': return [actor, '’s session was reset', has(d.runtime) ? ` (${d.runtime})` : ''];
      case 'wake_queued': return [actor, ' was woken', has(d.reason) ? `: ${words(d.reason)}` : ''];
      case 'agent_parked': return [actor, ' was parked', has(d.reason) ? `: ${d.reason}` : ''];
      case 'agent_unparked': return [actor, ' was unparked'];
      case 'autorun_turn_started':
        return [actor, ' started an autorun turn',
          Array.isArray(d.reasons) && d.reasons.length ? ` (${d.reasons.map(words).join(', ')})` : ''];
      case 'autorun_turn_completed': return [actor, ' finished an autorun turn'];
      case 'autorun_turn_aborted': return [actor, '’s autorun turn was cut short'];
      case 'turn_failed': return [actor, '’s turn failed', has(d.reason) ? `: ${d.reason}` : ''];
      case 'routine_fired':
        return [`routine ${d.routine || ''} made `, ev.task_id ? ctx.task(ev.task_id) : 'a task',
          ' for ', actor, d.catch_up ? ' (a catch-up fire)' : d.manual ? ' (fired by hand)' : ''];
      case 'routine_fire_failed':
        return [`routine ${d.routine || ''} could not make its task for `, actor, has(d.error) ? `: ${d.error}` : ''];
      case 'routine_added': return [`routine ${d.routine || ''} was added for `, actor];
      case 'routine_enabled': return [`routine ${d.routine || ''} was enabled`];
      case 'routine_disabled': return [`routine ${d.routine || ''} was disabled`];
      case 'routine_removed': return [`routine ${d.routine || ''} was removed`];
      case 'verify_queued':
        return [task, d.retry ? ' was queued for verification again' : ' waits for its verification', ...by(d.by)];
      case 'verify_started':
        return ['the verification of ', task, ' started',
          Number.isInteger(d.attempt) && d.attempt > 1 ? ` (attempt ${d.attempt}${d.resumed ? ', resumed' : ''})` : ''];
      case 'verify_gate':
        return [task, d.passed ? '’s gate passed' : '’s gate failed', has(d.how) ? ` (${d.how})` : ''];
      case 'verify_failed':
        return ['the verification of ', task, ' failed', has(d.error) ? `: ${d.error}` : ''];
      case 'verify_verdict':
        return [task, d.verdict === 'reject' ? ' was rejected' : ' was approved', ...by(d.by),
          d.verdict === 'reject' && has(d.reasons) ? `: ${q(d.reasons)}` : ''];
      default:
        // a kind this page does not know yet: still a sentence
        return [words(ev.kind || 'event'), has(ev.agent_id) ? [' (', ctx.agent(ev.agent_id), ')'] : '',
          has(ev.task_id) ? [' on ', ctx.task(ev.task_id)] : ''];
    }
  }

  window.huddleRender = Object.freeze({
    reply, replyTags, money, moneyText, moneyExact, eventSentence, endReason, available, ready, loaded,
  });
})();
