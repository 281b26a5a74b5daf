// fake-model.mjs -- a scripted model server on 127.0.0.1 for the real
// agent CLIs and huddle's native runtime: the Anthropic Messages API
// (Claude Code, native provider anthropic), the OpenAI Responses API
// (Codex) and the OpenAI Chat Completions API (native provider openai,
// POST /v1/chat/completions), all streamed as SSE, node's standard
// library only.
//
//   node fake-model.mjs --port-file FILE --log FILE
//
// Listens on 127.0.0.1, port 0; writes the port to --port-file once
// listening; appends one JSON line per request to --log:
// {ts, method, path, headers, body}.
//
// The script travels in the prompt, so one server serves every test and
// every resumed session: the LAST user message holding a line
// `FAKE_SCRIPT:{json}` is the script, and the reply is script.turns[k],
// where k counts the model turns already taken after that message (the
// assistant messages after it, for Anthropic; the model responses after
// it, for Responses). Past the end, the last text turn is repeated. A
// script {"by_agent": {"lead": {...}, "builder": {...}}} holds one per
// agent, picked by the "You are <id>," that starts huddle's prompts. A turn:
//   {"text": "..."}        the final text; {{tool_result}} becomes the
//                          text of the newest tool result in the request,
//                          {{history}} the number of user messages in it
//                          (which proves a resumed session sent its past),
//                          {{saw:TEXT}} "yes" when an earlier model reply
//                          in the request holds TEXT, else "no" (a resumed
//                          session sends its past replies),
//                          {{!name}} becomes {{name}} (for a script the
//                          text carries to another agent)
//   {"tool": {"name": "task_claim", "input": {...}}}, or a list of them:
//                          calls to huddle's MCP tools (Anthropic name
//                          mcp__huddle__<name>; Responses <name> in
//                          namespace mcp__huddle); "server": "huddle-coder"
//                          names another MCP server than huddle (a
//                          config printed by `huddle attach`; Codex's
//                          namespace spells it mcp__huddle_coder)
//   {"error": {"status": 400, "message": "..."}}
//                          that HTTP status, in the provider's error shape
//   {"hang": true}         never answer (until the client goes away)
//   {"cut": true}          start the streamed reply, then close the
//                          connection mid-way (no end of reply)
//   {"text": "...", "stall": true}
//                          (Chat Completions) stream the text's first
//                          half, then nothing more; when the client
//                          goes away, append {ts, event: "gone", path}
//                          to the log (a client that cancelled the call)
// and any turn may carry "fail_first": {"status": 429, "retry_after": 1}:
// the first request for that turn (of that script, on that API) gets that status (and
// Retry-After header, in seconds); the next is answered as the turn says.
// A script with "loop": true repeats its last turn past the end (a model
// that never stops calling tools). Tool names: huddle's native runtime
// offers the tools by their own names, so a call is named as the request's
// tools list names it when it has that exact name.
// and any turn may carry "usage": {"input_tokens", "output_tokens",
// "cached"} (default 100 in, 20 out, 0 cached) and "delay_ms": N (wait
// that long before answering).
// Without a script the reply is the text "fake reply".
import http from 'node:http';
import fs from 'node:fs';

const args = process.argv.slice(2);
function opt(name) {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : null;
}
const portFile = opt('--port-file');
const logFile = opt('--log');
if (!portFile || !logFile) {
  process.stderr.write('usage: node fake-model.mjs --port-file FILE --log FILE\n');
  process.exit(2);
}

function log(req, body) {
  const line = JSON.stringify({
    ts: Date.now(), method: req.method, path: req.url, headers: req.headers, body,
  });
  fs.appendFileSync(logFile, line + '\n');
}

// ---- the script -----------------------------------------------------------

function textOf(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b) => (b && typeof b.text === 'string' ? b.text : '')).join('\n');
}

// The last line of text that ends in FAKE_SCRIPT:{json} with json that
// parses (a quoted script, say inside an envelope's "| ...]" line, does
// not). A script of {"by_agent": {"<id>": {...}}} picks the one for the
// agent the prompt names ("You are <id>, ...", huddle's intro).
function findScript(text) {
  let found = null;
  for (const m of text.matchAll(/^.*?FAKE_SCRIPT:(\{.*\})\s*$/gm)) {
    try {
      found = JSON.parse(m[1]);
    } catch (e) { /* quoted, or broken: not a script */ }
  }
  if (found && found.by_agent) {
    const who = /You are ([a-z0-9][a-z0-9_-]*),/.exec(text);
    found = who ? found.by_agent[who[1]] || null : null;
  }
  return found;
}

function pickTurn(script, k) {
  const turns = Array.isArray(script.turns) ? script.turns : [];
  if (k < turns.length) return turns[k];
  if (script.loop && turns.length) return turns[turns.length - 1];
  for (let i = turns.length - 1; i >= 0; i--) if (turns[i].text !== undefined) return turns[i];
  return {text: 'done'};
}

// {{!name}} is the placeholder one script down: a script inside a reply
// (a leader's message to a member) keeps {{name}} for its own turn.
function fill(text, plan) {
  return text.replaceAll('{{tool_result}}', plan.lastTool).replaceAll('{{history}}', String(plan.users))
    .replace(/\{\{saw:([^}]*)\}\}/g, (m, what) => (plan.replies.some((r) => r.includes(what)) ? 'yes' : 'no'))
    .replaceAll('{{!', '{{');
}

function usageOf(turn) {
  const u = turn.usage || {};
  return {
    input: u.input_tokens ?? 100,
    output: u.output_tokens ?? 20,
    cached: u.cached ?? 0,
  };
}

// Anthropic: {messages: [{role, content}]}
function anthropicPlan(body) {
  const msgs = Array.isArray(body.messages) ? body.messages : [];
  let at = -1;
  let script = null;
  msgs.forEach((m, i) => {
    if (m.role !== 'user') return;
    const s = findScript(textOf(m.content));
    if (s) {
      at = i;
      script = s;
    }
  });
  let lastTool = '';
  let users = 0;
  const replies = msgs.filter((m) => m.role === 'assistant').map((m) => textOf(m.content));
  for (const m of msgs) {
    if (m.role !== 'user') continue;
    const blocks = Array.isArray(m.content) ? m.content : [];
    const results = blocks.filter((b) => b && b.type === 'tool_result');
    if (results.length) lastTool = textOf(results[results.length - 1].content);
    else users++;
  }
  if (!script) return {turn: {text: 'fake reply'}, lastTool, users, replies};
  const k = msgs.slice(at + 1).filter((m) => m.role === 'assistant').length;
  return {turn: pickTurn(script, k), lastTool, users, replies, key: 'messages#' + JSON.stringify(script) + '#' + k};
}

// Chat Completions: {messages: [{role: system|user|assistant|tool, ...}]}
function chatPlan(body) {
  const msgs = Array.isArray(body.messages) ? body.messages : [];
  let at = -1;
  let script = null;
  let lastTool = '';
  let users = 0;
  const replies = msgs.filter((m) => m.role === 'assistant').map((m) => textOf(m.content || ''));
  msgs.forEach((m, i) => {
    if (m.role === 'user') {
      users++;
      const s = findScript(textOf(m.content));
      if (s) {
        at = i;
        script = s;
      }
    }
    if (m.role === 'tool') lastTool = textOf(m.content);
  });
  if (!script) return {turn: {text: 'fake reply'}, lastTool, users, replies};
  const k = msgs.slice(at + 1).filter((m) => m.role === 'assistant').length;
  return {turn: pickTurn(script, k), lastTool, users, replies, key: 'chat#' + JSON.stringify(script) + '#' + k};
}

// Responses: {input: [items]} where items are messages
// ({type: 'message', role, content}) or function calls and outputs.
function responsesPlan(body) {
  const items = Array.isArray(body.input) ? body.input : [];
  let at = -1;
  let script = null;
  let lastTool = '';
  let users = 0;
  const replies = items.filter((it) => it.type === 'message' && it.role === 'assistant')
    .map((it) => textOf(it.content));
  items.forEach((it, i) => {
    const role = it.role;
    if ((it.type === 'message' || it.type === undefined) && role === 'user') {
      const text = textOf(it.content);
      const s = findScript(text);
      if (s) {
        at = i;
        script = s;
      }
      users++;
    }
    if (it.type === 'function_call_output') {
      lastTool = typeof it.output === 'string' ? it.output : textOf(it.output);
    }
  });
  if (!script) return {turn: {text: 'fake reply'}, lastTool, users, replies};
  // each model response after the script is one turn: a run of
  // function_call items (one response may call several tools), or an
  // assistant message
  let k = 0;
  let inCalls = false;
  for (const it of items.slice(at + 1)) {
    if (it.type === 'function_call') {
      if (!inCalls) k++;
      inCalls = true;
    } else if (it.type === 'message' && it.role === 'assistant') {
      k++;
      inCalls = false;
    } else if (it.type !== 'reasoning') {
      inCalls = false;
    }
  }
  return {turn: pickTurn(script, k), lastTool, users, replies};
}

// ---- SSE ------------------------------------------------------------------

function sseStart(res) {
  res.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache'});
}
function sse(res, event, data) {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

let seq = 0;
const nextId = (p) => `${p}_${Date.now().toString(36)}${(++seq).toString(36)}`;

// A tool call's name: the plain name when the request offers a tool of
// exactly that name (huddle's native runtime), else as Claude Code names
// an MCP server's tool.
function toolName(body, c) {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  if (tools.some((t) => t && (t.name === c.name || (t.function && t.function.name === c.name)))) return c.name;
  return `mcp__${c.server || 'huddle'}__${c.name}`;
}

// cut: what was written reaches the client, then the connection drops
// without the end of the reply (nor the chunked body's end)
function cutSoon(res) {
  setTimeout(() => res.destroy(), 100);
}

// fail_first: the keys of turns already failed once
const failed = new Set();
function failFirst(res, plan, provider) {
  const f = plan.turn.fail_first;
  if (!f || !plan.key || failed.has(plan.key)) return false;
  failed.add(plan.key);
  const headers = {'content-type': 'application/json'};
  if (f.retry_after !== undefined) headers['retry-after'] = String(f.retry_after);
  const message = f.message || `fake ${f.status || 429}`;
  const body = provider === 'anthropic'
    ? {type: 'error', error: {type: 'rate_limit_error', message}}
    : {error: {message, type: 'rate_limit_error', code: null}};
  res.writeHead(f.status || 429, headers);
  res.end(JSON.stringify(body));
  return true;
}

function chatReply(res, body, plan) {
  const {turn} = plan;
  if (turn.hang) return;
  if (failFirst(res, plan, 'openai')) return;
  if (turn.error) return answerError(res, turn, 'openai');
  const u = usageOf(turn);
  const id = nextId('chatcmpl');
  const base = {id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000),
    model: body.model || 'fake-model'};
  const chunk = (delta, finish) => `data: ${JSON.stringify({...base,
    choices: [{index: 0, delta, finish_reason: finish ?? null}]})}\n\n`;
  sseStart(res);
  res.write(chunk({role: 'assistant', content: ''}));
  let finish = 'stop';
  if (turn.tool) {
    const calls = Array.isArray(turn.tool) ? turn.tool : [turn.tool];
    calls.forEach((c, i) => {
      const args = typeof c.raw_args === 'string' ? c.raw_args : JSON.stringify(c.input || {});
      const half = Math.floor(args.length / 2);
      res.write(chunk({tool_calls: [{index: i, id: nextId('call'), type: 'function',
        function: {name: toolName(body, c), arguments: args.slice(0, half)}}]}));
      res.write(chunk({tool_calls: [{index: i, function: {arguments: args.slice(half)}}]}));
    });
    finish = 'tool_calls';
  } else {
    const text = fill(String(turn.text ?? ''), plan);
    const half = Math.floor(text.length / 2);
    res.write(chunk({content: text.slice(0, half)}));
    if (turn.cut) return cutSoon(res);
    if (turn.stall) {
      res.on('close', () => fs.appendFileSync(logFile,
        JSON.stringify({ts: Date.now(), event: 'gone', path: '/v1/chat/completions'}) + '\n'));
      return;
    }
    res.write(chunk({content: text.slice(half)}));
  }
  res.write(chunk({}, finish));
  res.write(`data: ${JSON.stringify({...base, choices: [],
    usage: {prompt_tokens: u.input, completion_tokens: u.output, total_tokens: u.input + u.output,
      prompt_tokens_details: {cached_tokens: u.cached}}})}\n\n`);
  res.write('data: [DONE]\n\n');
  res.end();
}

function answerError(res, turn, provider) {
  const status = turn.error.status || 500;
  const message = turn.error.message || 'fake error';
  const body = provider === 'anthropic'
    ? {type: 'error', error: {type: status === 529 ? 'overloaded_error' : 'invalid_request_error', message}}
    : {error: {message, type: 'invalid_request_error', code: null}};
  res.writeHead(status, {'content-type': 'application/json'});
  res.end(JSON.stringify(body));
}

function anthropicReply(res, body, plan) {
  const {turn} = plan;
  if (turn.hang) return; // the socket stays open
  if (failFirst(res, plan, 'anthropic')) return;
  if (turn.error) return answerError(res, turn, 'anthropic');
  const u = usageOf(turn);
  const id = nextId('msg');
  sseStart(res);
  sse(res, 'message_start', {type: 'message_start', message: {
    id, type: 'message', role: 'assistant', model: body.model || 'fake-model', content: [],
    stop_reason: null, stop_sequence: null,
    usage: {input_tokens: u.input, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: u.cached},
  }});
  let index = 0;
  let stop = 'end_turn';
  if (turn.tool) {
    const calls = Array.isArray(turn.tool) ? turn.tool : [turn.tool];
    for (const c of calls) {
      const input = typeof c.raw_args === 'string' ? c.raw_args : JSON.stringify(c.input || {});
      sse(res, 'content_block_start', {type: 'content_block_start', index,
        content_block: {type: 'tool_use', id: nextId('toolu'), name: toolName(body, c), input: {}}});
      sse(res, 'content_block_delta', {type: 'content_block_delta', index,
        delta: {type: 'input_json_delta', partial_json: input}});
      if (turn.cut) return cutSoon(res);
      sse(res, 'content_block_stop', {type: 'content_block_stop', index});
      index++;
    }
    stop = 'tool_use';
  } else {
    const text = fill(String(turn.text ?? ''), plan);
    sse(res, 'content_block_start', {type: 'content_block_start', index, content_block: {type: 'text', text: ''}});
    sse(res, 'content_block_delta', {type: 'content_block_delta', index, delta: {type: 'text_delta', text}});
    if (turn.cut) return cutSoon(res);
    sse(res, 'content_block_stop', {type: 'content_block_stop', index});
  }
  sse(res, 'message_delta', {type: 'message_delta', delta: {stop_reason: stop, stop_sequence: null},
    usage: {output_tokens: u.output}});
  sse(res, 'message_stop', {type: 'message_stop'});
  res.end();
}

function responsesReply(res, body, plan) {
  const {turn} = plan;
  if (turn.hang) return;
  if (turn.error) return answerError(res, turn, 'openai');
  const u = usageOf(turn);
  const rid = nextId('resp');
  const base = {id: rid, object: 'response', created_at: Math.floor(Date.now() / 1000),
    model: body.model || 'fake-model', status: 'in_progress', output: []};
  sseStart(res);
  let n = 0;
  sse(res, 'response.created', {type: 'response.created', sequence_number: n++, response: base});
  const output = [];
  if (turn.tool) {
    const calls = Array.isArray(turn.tool) ? turn.tool : [turn.tool];
    calls.forEach((c, i) => {
      const item = {type: 'function_call', id: nextId('fc'), call_id: nextId('call'),
        name: c.name, namespace: `mcp__${(c.server || 'huddle').replace(/[^A-Za-z0-9_]/g, '_')}`, arguments: JSON.stringify(c.input || {}), status: 'completed'};
      sse(res, 'response.output_item.added', {type: 'response.output_item.added', sequence_number: n++,
        output_index: i, item: {...item, arguments: '', status: 'in_progress'}});
      sse(res, 'response.function_call_arguments.delta', {type: 'response.function_call_arguments.delta',
        sequence_number: n++, item_id: item.id, output_index: i, delta: item.arguments});
      sse(res, 'response.function_call_arguments.done', {type: 'response.function_call_arguments.done',
        sequence_number: n++, item_id: item.id, output_index: i, arguments: item.arguments});
      sse(res, 'response.output_item.done', {type: 'response.output_item.done', sequence_number: n++,
        output_index: i, item});
      output.push(item);
    });
  } else {
    const text = fill(String(turn.text ?? ''), plan);
    const mid = nextId('msg');
    const part = {type: 'output_text', text: '', annotations: []};
    sse(res, 'response.output_item.added', {type: 'response.output_item.added', sequence_number: n++,
      output_index: 0, item: {type: 'message', id: mid, status: 'in_progress', role: 'assistant', content: []}});
    sse(res, 'response.content_part.added', {type: 'response.content_part.added', sequence_number: n++,
      item_id: mid, output_index: 0, content_index: 0, part});
    sse(res, 'response.output_text.delta', {type: 'response.output_text.delta', sequence_number: n++,
      item_id: mid, output_index: 0, content_index: 0, delta: text});
    sse(res, 'response.output_text.done', {type: 'response.output_text.done', sequence_number: n++,
      item_id: mid, output_index: 0, content_index: 0, text});
    sse(res, 'response.content_part.done', {type: 'response.content_part.done', sequence_number: n++,
      item_id: mid, output_index: 0, content_index: 0, part: {...part, text}});
    const item = {type: 'message', id: mid, status: 'completed', role: 'assistant',
      content: [{...part, text}]};
    sse(res, 'response.output_item.done', {type: 'response.output_item.done', sequence_number: n++,
      output_index: 0, item});
    output.push(item);
  }
  sse(res, 'response.completed', {type: 'response.completed', sequence_number: n++, response: {
    ...base, status: 'completed', output,
    usage: {input_tokens: u.input, input_tokens_details: {cached_tokens: u.cached},
      output_tokens: u.output, output_tokens_details: {reasoning_tokens: 0},
      total_tokens: u.input + u.output},
  }});
  res.end();
}

// ---- the server -----------------------------------------------------------

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('error', () => {});
  res.on('error', () => {});
  req.on('end', () => {
    let body = null;
    const raw = Buffer.concat(chunks).toString('utf8');
    if (raw) {
      try {
        body = JSON.parse(raw);
      } catch (e) {
        body = null;
      }
    }
    log(req, body);
    const path = (req.url || '').split('?')[0];
    if (req.method === 'HEAD' || (req.method === 'GET' && path === '/')) {
      res.writeHead(200);
      return res.end();
    }
    const later = (plan, reply) => {
      const ms = Number(plan.turn.delay_ms) || 0;
      if (ms > 0) setTimeout(() => reply(res, body, plan), ms);
      else reply(res, body, plan);
    };
    if (req.method === 'POST' && path === '/v1/messages' && body) {
      return later(anthropicPlan(body), anthropicReply);
    }
    if (req.method === 'POST' && path === '/v1/chat/completions' && body) {
      return later(chatPlan(body), chatReply);
    }
    if (req.method === 'POST' && path === '/v1/responses' && body) {
      return later(responsesPlan(body), responsesReply);
    }
    res.writeHead(404, {'content-type': 'application/json'});
    res.end(JSON.stringify({error: {message: `no route ${req.method} ${path}`}}));
  });
});
server.on('clientError', (err, socket) => socket.destroy());
server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(portFile + '.tmp', String(server.address().port));
  fs.renameSync(portFile + '.tmp', portFile);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
});
