// spend.js -- the team's spend on the dashboard: a chart of spend over
// time per agent, the budgets against their limits and the costliest
// turns. Loaded after app.js, whose window.huddle it uses.
//
//  (1) Everything shown is one GET /api/teams/:team/spend?since=W, read
//      when a team is selected, when the window changes and when the
//      stream carries a cost, budget_set or budget_exceeded event (a
//      burst of them is one read, REFRESH_MS later); answers for a team
//      or a window no longer shown are dropped.
//  (2) The chart is an SVG drawn here, no library: one column per bucket
//      of the window (gaps included), each a stack of one rect per agent
//      with spend in it, agents in id order, coloured by the page's hue
//      of the agent (app.js hueOf); a rect's height is its micro-cents
//      over the tallest column's, so heights are proportional to spend
//      and a column's top is the team's total for that bucket. The y
//      axis is labelled in USD. It is drawn at the width its panel has
//      and again when that changes, so it never scrolls the page.
//  (3) Accessible: the SVG is role=img with an aria-label that says the
//      window, the total and each agent's share; a visually hidden table
//      holds every bucket's figures for screen readers.
//  (4) Amounts arrive as integer micro-cents (1 USD = 10^8) and are shown
//      as dollars: cents when a figure is a cent or more, else two
//      significant digits, so a scripted team's fractions of a cent read.
//  (5) A budget is a bar of its spend against its limit (full at the
//      limit, never wider), its mode (warn or cap) in words, and over or
//      paused highlighted; one without a limit says so. Budgets count
//      spend since they began, not the window's.
//  (6) The panel reads, it never writes: budgets are set with `huddle
//      budget set`. Nodes come from h() (and svg() for the chart, the
//      same contract: strings become text nodes).
'use strict';

(() => {
  const hd = window.huddle;
  if (!hd) return;
  const {api, h, state, enc, hueOf} = hd;
  const $ = (sel) => document.querySelector(sel);
  const NS = 'http://www.w3.org/2000/svg';
  const MC = 1e8; // micro-cents in a dollar (4)
  const REFRESH_MS = 300; // (1)
  const CHART_H = 180;
  const PAD = {left: 52, right: 8, top: 10, bottom: 24};
  const WINDOWS = {'24h': 'the last 24 hours', '7d': 'the last 7 days', '30d': 'the last 30 days'};
  let shown = 0; // the generation of the last request (1)
  let last = null; // the answer drawn
  let timer = 0;

  function svg(tag, attrs, ...kids) {
    const el = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined) continue;
      if (k === 'hue') el.style.setProperty('--hue', String(v));
      else el.setAttribute(k, String(v));
    }
    for (const k of kids) el.append(typeof k === 'string' ? document.createTextNode(k) : k);
    return el;
  }

  // (4)
  function usd(mc) {
    const d = mc / MC;
    if (d === 0) return '$0';
    if (Math.abs(d) >= 0.01) return '$' + d.toFixed(2);
    return '$' + Number(d.toPrecision(2)).toString();
  }

  function bucketLabel(ms, hourly) {
    const d = new Date(ms);
    return hourly ? d.toLocaleTimeString([], {hour: '2-digit', minute: '2-digit'})
      : d.toLocaleDateString([], {month: 'short', day: 'numeric'});
  }

  // every bucket start of the window, gaps included (2)
  function slots(s) {
    const out = [];
    const first = s.since - (s.since % s.bucket_ms);
    for (let t = first; t <= s.until; t += s.bucket_ms) out.push(t);
    return out;
  }

  function chart(s, width) {
    const hourly = s.bucket === 'hour';
    const agents = s.agents.map((a) => a.agent);
    const byStart = new Map(s.buckets.map((b) => [b.start, b]));
    const starts = slots(s);
    const max = Math.max(1, ...s.buckets.map((b) => b.microcents));
    const plotW = Math.max(40, width - PAD.left - PAD.right);
    const plotH = CHART_H - PAD.top - PAD.bottom;
    const step = plotW / starts.length;
    const barW = Math.max(1, step * 0.7);
    const y = (mc) => PAD.top + plotH - (mc / max) * plotH;

    const axis = svg('g', {class: 'spend-axis'});
    for (const f of [0, 0.5, 1]) {
      const yy = y(max * f);
      axis.append(svg('line', {x1: PAD.left, x2: PAD.left + plotW, y1: yy, y2: yy, class: 'spend-grid'}),
        svg('text', {x: PAD.left - 6, y: yy + 4, 'text-anchor': 'end', class: 'spend-tick'},
          usd(Math.round(max * f))));
    }
    const xl = new Set([0, Math.floor((starts.length - 1) / 2), starts.length - 1]);
    for (const i of xl) {
      axis.append(svg('text', {x: PAD.left + step * i + step / 2, y: CHART_H - 6,
        'text-anchor': i === 0 ? 'start' : i === starts.length - 1 ? 'end' : 'middle',
        class: 'spend-tick'}, bucketLabel(starts[i], hourly)));
    }

    const bars = svg('g', {class: 'spend-bars'});
    starts.forEach((start, i) => {
      const b = byStart.get(start);
      if (!b) return;
      let top = PAD.top + plotH;
      const col = svg('g', {class: 'spend-col', 'data-start': start, 'data-microcents': b.microcents});
      for (const a of agents) {
        const mc = b.agents[a] || 0;
        if (!mc) continue;
        const hgt = (mc / max) * plotH;
        top -= hgt;
        col.append(svg('rect', {class: 'spend-bar', 'data-agent': a, 'data-microcents': mc,
          x: PAD.left + step * i + (step - barW) / 2, y: top, width: barW, height: hgt, hue: hueOf(a)},
        svg('title', {}, `${a}: ${usd(mc)} (${bucketLabel(start, hourly)})`)));
      }
      bars.append(col);
    });

    const share = s.agents.map((a) => `${a.agent} ${usd(a.microcents)}`).join(', ');
    const label = `Spend over ${WINDOWS[sinceValue()] || 'the window'} by ${s.bucket}: ` +
      `${usd(s.total.microcents)} in ${s.total.turns} turn${s.total.turns === 1 ? '' : 's'}` +
      (share ? `; ${share}` : '') + '.';
    return svg('svg', {id: 'spend-svg', role: 'img', 'aria-label': label, width, height: CHART_H,
      viewBox: `0 0 ${width} ${CHART_H}`}, axis, bars);
  }

  // (3)
  function table(s) {
    const agents = s.agents.map((a) => a.agent);
    const hourly = s.bucket === 'hour';
    return h('table', {id: 'spend-table', class: 'visually-hidden'},
      h('caption', {}, 'Spend per ' + s.bucket),
      h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, s.bucket === 'hour' ? 'Hour' : 'Day'),
        h('th', {scope: 'col'}, 'Total'), ...agents.map((a) => h('th', {scope: 'col'}, a)))),
      h('tbody', {}, ...s.buckets.map((b) => h('tr', {},
        h('th', {scope: 'row'}, bucketLabel(b.start, hourly)), h('td', {}, usd(b.microcents)),
        ...agents.map((a) => h('td', {}, usd(b.agents[a] || 0)))))));
  }

  function legend(s) {
    return h('ul', {id: 'spend-legend', class: 'spend-legend'}, ...s.agents.map((a) =>
      h('li', {'data-agent': a.agent, hue: hueOf(a.agent)},
        h('span', {class: 'spend-swatch', 'aria-hidden': 'true'}),
        h('span', {class: 'agent-ref'}, a.agent), ' ',
        h('span', {class: 'spend-amount'}, usd(a.microcents)),
        h('span', {class: 'spend-nturns'}, ` · ${a.turns} turn${a.turns === 1 ? '' : 's'}`))));
  }

  // (5)
  function budget(b) {
    const limited = typeof b.limit_cents === 'number';
    const limitMc = limited ? b.limit_cents * 1e6 : 0;
    const st = !limited ? 'tracking' : b.paused ? 'paused' : b.over ? 'over' : 'ok';
    const pct = limited ? (limitMc > 0 ? Math.min(100, (b.spent_microcents / limitMc) * 100) : 100) : 0;
    const words = limited
      ? `${usd(b.spent_microcents)} of ${usd(limitMc)} (${b.mode}${st === 'paused' ? ': paused' : st === 'over' ? ': over' : ''})`
      : `${usd(b.spent_microcents)} spent, no limit`;
    // the width through the CSSOM: the page's CSP refuses style attributes
    const fill = h('div', {class: 'budget-fill'});
    fill.style.width = `${pct.toFixed(2)}%`;
    const bar = limited ? h('div', {class: 'budget-bar', role: 'meter', 'aria-valuemin': 0,
      'aria-valuemax': limitMc, 'aria-valuenow': Math.min(b.spent_microcents, limitMc),
      'aria-label': `${b.scope} ${b.subject} budget`}, fill) : null;
    return h('li', {class: 'budget', 'data-scope': b.scope, 'data-subject': b.subject, 'data-state': st},
      h('span', {class: 'budget-name'}, `${b.scope} ${b.subject}`),
      bar, h('span', {class: 'budget-words'}, words));
  }

  function what(t) {
    if (t.source === 'exchange') return `exchange turn ${t.turn}`;
    if (t.source === 'conversation') return 'conversation';
    if (t.source === 'autorun') return `autorun turn ${t.autorun_turn}`;
    return 'turn';
  }

  function turn(t) {
    const d = new Date(t.ts);
    return h('li', {class: 'spend-turn', 'data-seq': t.seq, 'data-microcents': t.microcents, hue: hueOf(t.agent)},
      h('span', {class: 'spend-amount'}, usd(t.microcents)), ' ',
      h('span', {class: 'agent-ref'}, t.agent), ' ',
      h('span', {class: 'spend-what'}, what(t)), ' ',
      h('span', {class: 'spend-tokens'}, `${t.input_tokens} in / ${t.output_tokens} out${t.estimated ? ' (est.)' : ''}`), ' ',
      h('time', {datetime: d.toISOString(), title: d.toLocaleString()},
        d.toLocaleString([], {dateStyle: 'short', timeStyle: 'short'})));
  }

  function draw() {
    const s = last;
    if (!s) return;
    const any = s.total.turns > 0;
    const box = $('#spend-chart');
    $('#spend-total').textContent = any
      ? `${usd(s.total.microcents)} in ${s.total.turns} turn${s.total.turns === 1 ? '' : 's'}` : '';
    $('#spend-empty').hidden = any;
    $('#spend-empty').textContent = `No spend in ${WINDOWS[sinceValue()] || 'this window'}.`;
    box.hidden = !any;
    if (any) {
      const width = Math.max(200, Math.floor(box.clientWidth || 600));
      box.replaceChildren(chart(s, width), legend(s), table(s));
    } else box.replaceChildren();
    $('#spend-budgets').replaceChildren(...s.budgets.map(budget));
    $('#spend-budgets-h').hidden = s.budgets.length === 0;
    $('#spend-turns').replaceChildren(...s.costliest.map(turn));
    $('#spend-turns-h').hidden = s.costliest.length === 0;
  }

  function sinceValue() {
    return $('#spend-since')?.value || '24h';
  }

  async function load() {
    const team = state.team;
    const since = sinceValue();
    const mine = ++shown;
    if (!team) return;
    let r;
    try {
      r = await api('GET', `/api/teams/${enc(team)}/spend?since=${enc(since)}`);
    } catch (e) {
      if (mine === shown) console.warn('huddle:', e.message);
      return;
    }
    if (mine !== shown || team !== state.team || since !== sinceValue()) return; // (1)
    last = r;
    draw();
  }

  function soon() {
    clearTimeout(timer);
    timer = setTimeout(load, REFRESH_MS);
  }

  // a team's first read waits until the page is idle: the board and the
  // agents, above it, load first (as memory.js and routines.js do)
  const idle = (f) => (window.requestIdleCallback ? requestIdleCallback(() => f(), {timeout: 1000})
    : setTimeout(f, 100));
  document.addEventListener('huddle:team', () => { last = null; idle(load); });
  document.addEventListener('huddle:event', (e) => {
    const k = e.detail && e.detail.kind;
    if (k === 'cost' || k === 'budget_set' || k === 'budget_exceeded') soon();
  });
  $('#spend-since')?.addEventListener('change', load);
  // (2): drawn again at the panel's new width
  let width = 0;
  new ResizeObserver(() => {
    const w = Math.floor($('#spend-panel').clientWidth);
    if (w !== width) { width = w; draw(); }
  }).observe($('#spend-panel'));
  if (state.team) idle(load);
})();
