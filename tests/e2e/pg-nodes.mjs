// pg-nodes.mjs -- the clients of test-pg-nodes.sh: real MCP clients (the
// official TypeScript SDK over Streamable HTTP, as mcp.test.mjs uses it)
// and an SSE reader, driving two `huddle serve` nodes on one PostgreSQL
// database. Each mode prints what it saw as JSON; the shell test judges.
//
//   node pg-nodes.mjs post --out FILE --count N --tag TAG URL...
//       one client per attach URL, all at once, each posting N messages
//       "TAG AGENT I" with team_chat_post one after another; every answer
//       is a line of FILE, written as it comes: {"agent", "text", "seq"}
//       for an acknowledged post, {"agent", "text", "error"} for a refused
//       or failed call (an isError result's text, or the transport's
//       error). Prints {"acked", "errors"}.
//   node pg-nodes.mjs load --out FILE --stop FILE --tag TAG URL...
//       as post, but each client posts until the stop file exists, and a
//       failed call does not end it: the client waits 100 ms (pacing, not
//       a check) and posts the next message, so a node that comes back is
//       posted to again.
//   node pg-nodes.mjs claim --tasks ID,ID... URL...
//       one client per attach URL; for each task in turn every client
//       calls task_claim at once. Prints [{"task", "winners": [AGENT],
//       "owners": [the winners' task.owner], "losers": [{"agent",
//       "text"}]}].
//   node pg-nodes.mjs sse --stream URL --post URL --text TEXT
//       opens the event stream URL (Accept: text/event-stream), and once
//       its first line arrived POSTs {"text": TEXT} to the post URL (a
//       room's REST route); waits for the team_chat_post event whose data
//       carries the post's seq. Prints {"posted": the post, "event": the
//       event's data, "latency_ms"} (from the POST to the event).
//
// An attach URL names its agent (postAuthorAgentId=); a client is that
// agent. Caller: tests/e2e/test-pg-nodes.sh.
import { appendFileSync, existsSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

function usage(msg) {
  console.error(`pg-nodes.mjs: ${msg}`);
  console.error('usage: node pg-nodes.mjs post|load|claim|sse [OPTIONS] [URL...]');
  process.exit(2);
}

const [mode, ...rest] = process.argv.slice(2);
const opts = {};
const urls = [];
for (let i = 0; i < rest.length; i++) {
  if (rest[i].startsWith('--')) {
    if (i + 1 >= rest.length) usage(`${rest[i]} needs a value`);
    opts[rest[i].slice(2)] = rest[++i];
  } else {
    urls.push(rest[i]);
  }
}

function agentOf(url) {
  const a = new URL(url).searchParams.get('postAuthorAgentId');
  if (!a) usage(`not an attach URL (no postAuthorAgentId): ${url}`);
  return a;
}

async function connect(url) {
  const client = new Client({ name: 'huddle-pg-nodes', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

// One tool call: {ok: structuredContent} or {error: text}.
async function call(client, name, args) {
  try {
    const res = await client.callTool({ name, arguments: args });
    if (res.isError) return { error: res.content?.[0]?.text ?? JSON.stringify(res) };
    return { ok: res.structuredContent };
  } catch (e) {
    return { error: `${e?.message ?? e}${e?.cause ? ` (${e.cause.message ?? e.cause})` : ''}` };
  }
}

async function post(loop) {
  const out = opts.out ?? usage('--out FILE is required');
  const tag = opts.tag ?? usage('--tag TAG is required');
  const count = loop ? Infinity : Number(opts.count);
  if (!loop && !(count > 0)) usage('--count must be a positive number');
  const stop = loop ? (opts.stop ?? usage('--stop FILE is required')) : null;
  if (urls.length === 0) usage('no attach URL');
  let acked = 0;
  let errors = 0;
  const one = async (url) => {
    const agent = agentOf(url);
    let client = null;
    for (let i = 1; i <= count && !(stop && existsSync(stop)); i++) {
      const text = `${tag} ${agent} ${i}`;
      let r;
      if (client === null) {
        try {
          client = await connect(url);
        } catch (e) {
          r = { error: `connect: ${e?.message ?? e}` };
        }
      }
      if (client !== null) r = await call(client, 'team_chat_post', { text });
      if (r.ok) {
        acked++;
        appendFileSync(out, `${JSON.stringify({ agent, text, seq: r.ok.posted.seq })}\n`);
      } else {
        errors++;
        appendFileSync(out, `${JSON.stringify({ agent, text, error: r.error })}\n`);
        if (!loop) continue;
        await new Promise((res) => setTimeout(res, 100));
      }
    }
    if (client !== null) await client.close().catch(() => {});
  };
  await Promise.all(urls.map(one));
  console.log(JSON.stringify({ acked, errors }));
}

async function claim() {
  const tasks = (opts.tasks ?? usage('--tasks ID,ID... is required')).split(',').map(Number);
  if (urls.length === 0) usage('no attach URL');
  const agents = urls.map(agentOf);
  const clients = await Promise.all(urls.map(connect));
  const report = [];
  try {
    for (const task_id of tasks) {
      const rs = await Promise.all(clients.map((c) => call(c, 'task_claim', { task_id })));
      const entry = { task: task_id, winners: [], owners: [], losers: [] };
      rs.forEach((r, i) => {
        if (r.ok) {
          entry.winners.push(agents[i]);
          entry.owners.push(r.ok.task.owner);
        } else {
          entry.losers.push({ agent: agents[i], text: r.error });
        }
      });
      report.push(entry);
    }
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
  }
  console.log(JSON.stringify(report));
}

async function sse() {
  const stream = opts.stream ?? usage('--stream URL is required');
  const postUrl = opts.post ?? usage('--post URL is required');
  const text = opts.text ?? usage('--text TEXT is required');
  const ac = new AbortController();
  const res = await fetch(stream, { headers: { Accept: 'text/event-stream' }, signal: ac.signal });
  if (res.status !== 200) throw new Error(`the stream answered ${res.status}: ${await res.text()}`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let posted = null;
  let sent = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before the post's event; it said: ${buf}`);
    buf += value;
    if (posted === null && buf.includes('\n')) {
      // the stream is open: post through the other node
      sent = performance.now();
      const r = await fetch(postUrl, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ text }),
      });
      const body = await r.json();
      if (r.status !== 201) throw new Error(`the post answered ${r.status}: ${JSON.stringify(body)}`);
      posted = body.post;
    }
    let cut;
    while (posted !== null && (cut = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
      if (!/^event: team_chat_post$/m.test(block) || !data) continue;
      const ev = JSON.parse(data);
      if (ev.data?.seq === posted.seq) {
        const latency = performance.now() - sent;
        ac.abort();
        console.log(JSON.stringify({ posted, event: ev, latency_ms: Math.round(latency * 10) / 10 }));
        return;
      }
    }
  }
}

const modes = { post: () => post(false), load: () => post(true), claim, sse };
if (!modes[mode]) usage(`unknown mode ${mode ?? '(none)'}`);
modes[mode]().then(() => process.exit(0), (e) => {
  console.error(`pg-nodes.mjs ${mode}: ${e?.stack ?? e}`);
  process.exit(1);
});
