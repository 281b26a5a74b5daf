// mcp-listen.test.mjs -- live room delivery to MCP clients (SPEC 10.1):
// bound agents of team dev listen over the 2025 era's GET /mcp stream
// (with the session initialize gave) and over 2026-07-28's
// subscriptions/listen, while a third agent makes 1,000 posts and the
// listeners post too. Each listener must hear every post of the others
// exactly once, in seq order, never its own, across a connection the test
// drops mid-way and resumes by event id; a listener of team ops hears
// nothing; mail arrives as a notification. The SSE streams are read with
// fetch (the raw protocol, so the test can drop and resume them); the
// SDK's v2 client listens too, in both eras. Run by test-mcp-listen.sh
// with HUDDLE and HUDDLE_HOME (teams dev and ops) set.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const HUDDLE = process.env.HUDDLE;
const HOME = process.env.HUDDLE_HOME;
const POSTS = 1000;
const MODERN = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
};
let server;
let port;

function huddle(...args) {
  return execFileSync(HUDDLE, ['--home', HOME, ...args], { encoding: 'utf8' });
}

function attachUrl(team, agent) {
  return JSON.parse(huddle('attach', team, agent, '--format', 'json', '--port', String(port))).url;
}

before(async () => {
  server = spawn(HUDDLE, ['--home', HOME, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'ignore'] });
  port = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/huddle is running at http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) resolve(Number(m[1]));
    });
    server.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
});

after(() => { server.kill('SIGTERM'); });

async function rpc(url, method, params, headers = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await res.text();
  return { res, body: text ? JSON.parse(text) : null };
}

async function post(url, text) {
  const { body } = await rpc(url, 'tools/call', { name: 'team_chat_post', arguments: { text } });
  assert.equal(body.result.isError, undefined, JSON.stringify(body));
  return body.result.structuredContent.posted.seq;
}

// One listener: reads an SSE stream, keeps every notification, and can be
// dropped and resumed from the last event id it saw.
class Listener {
  constructor(name, open) {
    this.name = name;
    this.open = open; // (lastEventId or undefined, signal) => Promise<Response>
    this.lastId = undefined;
    this.notes = [];
    this.acks = 0;
    this.errors = [];
  }

  async start() {
    this.ctl = new AbortController();
    const res = await this.open(this.lastId, this.ctl.signal);
    if (res.status !== 200) assert.fail(`${this.name}: ${res.status} ${await res.text()}`);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    this.reading = (async () => {
      let buf = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let cut;
          while ((cut = buf.indexOf('\n\n')) >= 0) {
            this.event(buf.slice(0, cut));
            buf = buf.slice(cut + 2);
          }
        }
      } catch (e) {
        if (e.name !== 'AbortError') this.errors.push(String(e));
      }
    })();
  }

  event(block) {
    let id;
    let data = '';
    for (const line of block.split('\n')) {
      if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('data: ')) data += line.slice(6);
    }
    if (id !== undefined) this.lastId = id;
    if (data === '') return;
    const msg = JSON.parse(data);
    if (msg.method === 'notifications/subscriptions/acknowledged') this.acks++;
    else this.notes.push(msg);
  }

  async drop() {
    this.ctl.abort();
    await this.reading;
  }

  room() { return this.notes.filter((n) => n.method === 'notifications/huddle/room').map((n) => n.params); }
  mail() { return this.notes.filter((n) => n.method === 'notifications/huddle/mail').map((n) => n.params); }
}

async function until(what, cond, ms = 120000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// A 2025 client: initialize over the signed URL, then GET /mcp in its session.
async function getStream(url) {
  const { res } = await rpc(url, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'listen', version: '1' } });
  const sid = res.headers.get('mcp-session-id');
  assert.match(sid ?? '', /^[0-9a-f]{32}$/, 'initialize over HTTP opens a session');
  await rpc(url, 'notifications/initialized', undefined, { 'Mcp-Session-Id': sid });
  return (last, signal) => fetch(url, {
    headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sid, ...(last ? { 'Last-Event-ID': last } : {}) },
    signal,
  });
}

// A 2026 client: subscriptions/listen, resumed with Last-Event-ID.
function listenStream(url, id, notifications) {
  return (last, signal) => fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'subscriptions/listen',
      ...(last ? { 'Last-Event-ID': last } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { _meta: META, notifications } }),
    signal,
  });
}

test('1,000 posts reach every listener once, in order, across a reconnect; never its own; not another team', async () => {
  const urls = {
    manager: attachUrl('dev', 'manager'),
    coder: attachUrl('dev', 'coder'),
    reviewer: attachUrl('dev', 'reviewer'),
    sre: attachUrl('ops', 'sre'),
  };
  const both = { 'huddle/room': true, 'huddle/mail': true };
  const coder = new Listener('coder (2025 GET /mcp)', await getStream(urls.coder));
  const reviewer = new Listener('reviewer (2026 listen)', listenStream(urls.reviewer, 'rev-1', both));
  const sreGet = new Listener('sre (2025 GET /mcp)', await getStream(urls.sre));
  const sreListen = new Listener('sre (2026 listen)', listenStream(urls.sre, 7, both));
  for (const l of [coder, reviewer, sreGet, sreListen]) await l.start();
  await until('the acknowledgements', () => reviewer.acks === 1 && sreListen.acks === 1, 10000);

  const authors = new Map(); // seq -> author
  let made = 0;
  const poster = async (who, n, tag) => {
    for (let i = 0; i < n; i++) {
      const seq = await post(urls[who], `${tag} ${i}`);
      authors.set(seq, who);
      if (who === 'manager') made++;
    }
  };
  const dropped = new Set();
  const dropMidway = async (l) => {
    await until(`${l.name} mid-way`, () => made >= POSTS / 2 || l.room().length >= POSTS / 3);
    await l.drop();
    dropped.add(l.name);
    await new Promise((r) => setTimeout(r, 200)); // posts keep coming while it is away
    await l.start();
  };
  await Promise.all([
    poster('manager', POSTS, 'manager post'),
    poster('coder', 25, 'coder post'),
    poster('reviewer', 25, 'reviewer post'),
    dropMidway(coder),
    dropMidway(reviewer),
  ]);
  assert.equal(dropped.size, 2, 'both listeners were dropped and resumed');
  const head = Math.max(...authors.keys());

  for (const [l, self] of [[coder, 'coder'], [reviewer, 'reviewer']]) {
    const want = [...authors.keys()].filter((s) => authors.get(s) !== self).sort((a, b) => a - b);
    await until(`${l.name} to hear all ${want.length} posts`,
      () => l.room().length >= want.length && l.room().at(-1).seq >= want.at(-1));
    const got = l.room();
    assert.deepEqual(got.map((p) => p.seq), want, `${l.name}: every post once, in seq order`);
    assert.ok(got.every((p) => p.authorAgentId !== self), `${l.name} never hears its own posts`);
    for (const p of got) {
      assert.equal(p.roomId, 'team:dev');
      assert.match(p.wrapped, new RegExp(`^\\[Inter-session message · from=${p.authorAgentId} · kind=peer · seq=${p.seq} · isUser=false\\]\\n\\| `));
    }
    assert.deepEqual(l.errors, []);
  }
  assert.ok(reviewer.notes.every((n) => n.params._meta['io.modelcontextprotocol/subscriptionId'] === 'rev-1'),
    'every 2026 notification names its subscription');
  assert.equal(reviewer.acks, 2, 'the resumed listen is acknowledged again');
  assert.ok(coder.notes.every((n) => n.params._meta === undefined), 'a 2025 stream carries no subscription id');

  // Mail to a listener is a notification on its stream.
  const { body } = await rpc(urls.manager, 'tools/call', {
    name: 'send_message', arguments: { type: 'message', recipient: 'coder', content: 'please review #1', summary: 'review #1' },
  });
  assert.equal(body.result.isError, undefined, JSON.stringify(body));
  await rpc(urls.manager, 'tools/call', {
    name: 'send_message', arguments: { type: 'message', recipient: 'reviewer', content: 'and you #2' },
  });
  await until('the mail', () => coder.mail().length === 1 && reviewer.mail().length === 1, 20000);
  assert.equal(coder.mail()[0].fromAgentId, 'manager');
  assert.equal(coder.mail()[0].summary, 'review #1');
  assert.match(coder.mail()[0].wrapped, /^<teammate-message teammate_id="manager" type="message" summary="review #1">\nplease review #1\n<\/teammate-message>$/);
  assert.match(reviewer.mail()[0].wrapped, /and you #2/);

  // The other team heard nothing, and a post of its own reaches neither dev listener.
  await post(urls.sre, 'ops only');
  await post(urls.manager, 'the last dev post');
  await until('the last dev post', () => coder.room().at(-1).seq > head && reviewer.room().at(-1).seq > head);
  assert.deepEqual(sreGet.notes, [], 'a team ops listener (2025) hears nothing of team dev');
  assert.deepEqual(sreListen.notes, [], 'a team ops listener (2026) hears nothing of team dev');
  assert.ok(coder.room().every((p) => p.roomId === 'team:dev'));
  for (const l of [coder, reviewer, sreGet, sreListen]) await l.drop();
});

test('the SDK v2 client hears mail and posts in both eras', async () => {
  const heard = { legacy: [], modern: [] };
  const clients = {};
  for (const [era, mode] of [['legacy', 'legacy'], ['modern', { pin: MODERN }]]) {
    const c = new Client({ name: 'huddle-listen', version: '1.0.0' }, { versionNegotiation: { mode } });
    c.fallbackNotificationHandler = async (n) => { heard[era].push(n); };
    await c.connect(new StreamableHTTPClientTransport(new URL(attachUrl('dev', era === 'legacy' ? 'coder' : 'tester'))));
    clients[era] = c;
  }
  const caps = clients.legacy.getServerCapabilities();
  assert.equal(caps.experimental['huddle/listen'].room, 'notifications/huddle/room');
  const sub = await clients.modern.listen({ 'huddle/room': true, 'huddle/mail': true });
  assert.equal(sub.honoredFilter !== undefined, true);
  // the 2025 client opened its GET stream after initialized; give it a moment
  await new Promise((r) => setTimeout(r, 500));
  const manager = attachUrl('dev', 'manager');
  for (const to of ['coder', 'tester']) {
    await rpc(manager, 'tools/call', { name: 'send_message', arguments: { type: 'message', recipient: to, content: `sdk mail for ${to}` } });
  }
  await post(manager, 'sdk room post');
  const got = (era, method) => heard[era].filter((n) => n.method === method);
  await until('the SDK notifications', () => ['legacy', 'modern'].every((era) =>
    got(era, 'notifications/huddle/mail').length >= 1 && got(era, 'notifications/huddle/room').length >= 1), 20000);
  assert.match(got('legacy', 'notifications/huddle/mail')[0].params.wrapped, /sdk mail for coder/);
  assert.match(got('modern', 'notifications/huddle/mail')[0].params.wrapped, /sdk mail for tester/);
  assert.match(got('modern', 'notifications/huddle/room').at(-1).params.wrapped, /sdk room post/);
  await sub.close();
  for (const c of Object.values(clients)) await c.close();
});
