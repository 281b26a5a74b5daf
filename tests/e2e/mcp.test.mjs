// mcp.test.mjs -- huddle's MCP servers driven by the official MCP
// TypeScript SDK client, over stdio (`huddle mcp`) and Streamable HTTP
// (`POST /mcp` on `huddle serve`), plus the anti-spoof rules of SPEC 10.3
// and 10.4. Run by test-mcp.sh with HUDDLE (the binary) and HUDDLE_HOME (a
// fresh home holding the example team) in the environment.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const HUDDLE = process.env.HUDDLE;
const HOME = process.env.HUDDLE_HOME;
// where every huddle process stores: the home, and the store HUDDLE_STORE
// names (the e2e-pg set's PostgreSQL database) as --store, since the SDK's
// stdio transport gives its child only a default environment (PATH, HOME,
// ...), not ours
const AT = ['--home', HOME,
  ...(process.env.HUDDLE_STORE ? ['--store', process.env.HUDDLE_STORE] : [])];
let server;
let port;

function huddle(...args) {
  return execFileSync(HUDDLE, [...AT, ...args], { encoding: 'utf8' });
}

function attachUrl(agent) {
  return JSON.parse(huddle('attach', agent, '--format', 'json', '--port', String(port))).url;
}

async function connect(transport) {
  const client = new Client({ name: 'huddle-e2e', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

const stdioClient = (agent) => connect(new StdioClientTransport({
  command: HUDDLE,
  args: [...AT, 'mcp', '--team', 'dev', '--agent', agent],
  stderr: 'ignore',
}));
const httpClient = (url) => connect(new StreamableHTTPClientTransport(new URL(url)));

function result(res) {
  assert.equal(res.isError, undefined, `tool failed: ${res.content?.[0]?.text}`);
  assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent);
  return res.structuredContent;
}

before(async () => {
  server = spawn(HUDDLE, [...AT, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'ignore'] });
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

// The flow the issue names, once per transport.
for (const [name, make] of [
  ['stdio', (agent) => stdioClient(agent)],
  ['http', (agent) => httpClient(attachUrl(agent))],
]) {
  test(`${name}: initialize, tools, post, subscribe, create, contested claim`, async () => {
    const coder = await make('coder');
    const reviewer = await make('reviewer');
    try {
      assert.equal(coder.getServerVersion().name, 'huddle');
      const { tools } = await coder.listTools();
      const names = tools.map((t) => t.name);
      for (const want of ['team_chat_post', 'team_chat_subscribe', 'task_create', 'task_claim', 'inbox_read']) {
        assert.ok(names.includes(want), `${want} listed`);
      }
      for (const t of tools) {
        assert.equal(t.inputSchema.type, 'object');
        assert.ok(t.inputSchema.properties && Array.isArray(t.inputSchema.required), t.name);
      }

      const before = result(await reviewer.callTool({ name: 'team_chat_subscribe', arguments: {} })).nextSeq;
      const text = `hello over ${name}\nsecond line`;
      const posted = result(await coder.callTool({ name: 'team_chat_post', arguments: { text } })).posted;
      assert.equal(posted.roomId, 'team:dev');
      assert.equal(posted.authorAgentId, 'coder');

      const seen = result(await reviewer.callTool({ name: 'team_chat_subscribe', arguments: { sinceSeq: before } }));
      const mine = seen.posts.find((p) => p.seq === posted.seq);
      assert.ok(mine, 'reviewer sees the post');
      assert.equal(mine.wrapped,
        `[Inter-session message · from=coder · kind=peer · seq=${posted.seq} · isUser=false]\n| hello over ${name}\n| second line`);
      assert.ok(seen.nextSeq >= posted.seq);

      const own = result(await coder.callTool({ name: 'team_chat_subscribe', arguments: { sinceSeq: before } }));
      assert.equal(own.posts.filter((p) => p.authorAgentId === 'coder').length, 0, 'never its own posts');

      const task = result(await coder.callTool({ name: 'task_create', arguments: { subject: `contested over ${name}` } })).task;
      assert.equal(task.status, 'pending');
      const claims = await Promise.all([
        coder.callTool({ name: 'task_claim', arguments: { task_id: task.id } }),
        reviewer.callTool({ name: 'task_claim', arguments: { task_id: task.id } }),
      ]);
      const winners = claims.filter((c) => !c.isError);
      const losers = claims.filter((c) => c.isError);
      assert.equal(winners.length, 1, 'exactly one claim wins');
      assert.equal(losers.length, 1);
      const owner = winners[0].structuredContent.task.owner;
      assert.equal(losers[0].content[0].text, `task ${task.id} is already claimed by ${owner}`);
    } finally {
      await coder.close();
      await reviewer.close();
    }
  });
}

// SPEC 4, issue 21 item 5: a completion names the tasks it made ready, in
// its result, the room line and the leader's task_update; a dependent still
// blocked by another task, or owned already, is not named.
test('stdio: task_complete names the tasks it made ready', async () => {
  const coder = await stdioClient('coder');
  const tester = await stdioClient('tester');
  try {
    const create = async (subject, depends_on = []) => result(await coder.callTool({
      name: 'task_create', arguments: { subject, depends_on },
    })).task.id;
    const a = await create('Ready source');
    const b = await create('Ready one', [a]);
    const c = await create('Other gate');
    const d = await create('Ready two', [a]);
    const e = await create('Still gated', [a, c]);
    const f = await create('Owned dependent');
    result(await tester.callTool({ name: 'task_claim', arguments: { task_id: f } }));
    result(await tester.callTool({ name: 'task_link', arguments: { task_id: f, depends_on: a } }));
    result(await coder.callTool({ name: 'task_claim', arguments: { task_id: a } }));
    const done = result(await coder.callTool({
      name: 'task_complete', arguments: { task_id: a, result: 'source ready' },
    })).task;
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.unblocked, [b, d]);
    assert.ok(!done.unblocked.includes(e) && !done.unblocked.includes(f));

    const room = JSON.parse(huddle('chat', 'read', 'dev', '--json', '--limit', '500'));
    assert.equal(room.posts.at(-1).body,
      `Task #${a} "Ready source" completed by coder; now ready: #${b} "Ready one", #${d} "Ready two".`);
    const inbox = JSON.parse(huddle('inbox', 'manager', '--peek', '--json'));
    const note = inbox.filter((m) => m.type === 'task_update').at(-1);
    assert.equal(note.from_agent, 'coder');
    assert.equal(note.content,
      `Task #${a} "Ready source" completed by coder: source ready\nNow ready: #${b} "Ready one", #${d} "Ready two"`);

    // Nothing waits on the owned task: its completion names nothing.
    const plain = result(await tester.callTool({ name: 'task_complete', arguments: { task_id: f } })).task;
    assert.deepEqual(plain.unblocked, []);
  } finally {
    await coder.close();
    await tester.close();
  }
});

// Issue 21 item 7: task_assign with auto picks the idle member with the
// fewest open tasks, ties to the lowest id, skipping members in error or
// shut down; with nobody idle it refuses and writes nothing. A team of its
// own, so the other tests' claims do not move the counts.
test('stdio: task_assign auto picks the member', async () => {
  huddle('team', 'create', 'pick');
  huddle('agent', 'add', 'pick', 'boss', '--leader');
  for (const a of ['bo', 'ana', 'cy', 'dee']) huddle('agent', 'add', 'pick', a);
  huddle('agent', 'set-status', 'cy', 'error');
  huddle('agent', 'set-status', 'dee', 'shutdown');
  const boss = await connect(new StdioClientTransport({
    command: HUDDLE, args: [...AT, 'mcp', '--team', 'pick', '--agent', 'boss'], stderr: 'ignore',
  }));
  try {
    const ids = [];
    for (const subject of ['one', 'two', 'three', 'four']) {
      ids.push(result(await boss.callTool({ name: 'task_create', arguments: { subject } })).task.id);
    }
    const auto = async (task_id) => result(await boss.callTool({ name: 'task_assign', arguments: { task_id, auto: true } }));
    let got = await auto(ids[0]);
    assert.equal(got.assignee, 'ana');
    assert.equal(got.task.owner, 'ana');
    assert.equal(got.task.status, 'claimed');
    assert.equal(got.picked_because, 'idle, 0 open tasks, lowest id of 2 tied');
    got = await auto(ids[1]);
    assert.deepEqual([got.assignee, got.picked_because], ['bo', 'idle, 0 open tasks']);
    got = await auto(ids[2]);
    assert.deepEqual([got.assignee, got.picked_because], ['ana', 'idle, 1 open task, lowest id of 2 tied']);
    const room = JSON.parse(huddle('chat', 'read', 'pick', '--json', '--limit', '500'));
    assert.equal(room.posts.at(-1).body, `Task #${ids[2]} "three" assigned to ana by boss.`);

    // starting a task makes its owner working (activity.h): not idle
    huddle('task', 'start', String(ids[0]), '--as', 'ana');
    huddle('task', 'start', String(ids[1]), '--as', 'bo');
    const refused = await boss.callTool({ name: 'task_assign', arguments: { task_id: ids[3], auto: true } });
    assert.equal(refused.isError, true);
    assert.equal(refused.content[0].text,
      `no idle member in team pick to assign task ${ids[3]} to (ana: working, bo: working, cy: error, dee: shutdown)`);
    const left = result(await boss.callTool({ name: 'task_get', arguments: { task_id: ids[3] } })).task;
    assert.deepEqual([left.status, left.owner], ['pending', null]);

    const both = await boss.callTool({ name: 'task_assign', arguments: { task_id: ids[3], assignee: 'cy', auto: true } });
    assert.equal(both.isError, true);
    assert.equal(both.content[0].text, 'pass assignee or auto, not both');
    got = result(await boss.callTool({ name: 'task_assign', arguments: { task_id: ids[3], assignee: 'bo' } }));
    assert.equal(got.assignee, 'bo');
    assert.equal(got.picked_because, undefined);
  } finally {
    await boss.close();
  }
});

// team_delegate creates, assigns and tells in one act; every refusal
// names why and leaves no task, line or message. Subtasks: parent_task_id,
// parent_id and children on reads, the caps, and the parent that cannot
// complete while a subtask is open. A team of its own.
test('stdio: team_delegate and subtasks with their caps', async () => {
  huddle('team', 'create', 'dele');
  huddle('agent', 'add', 'dele', 'dchief', '--leader');
  for (const a of ['dw1', 'dw2', 'dw3']) huddle('agent', 'add', 'dele', a);
  const open = (agent) => connect(new StdioClientTransport({
    command: HUDDLE, args: [...AT, 'mcp', '--team', 'dele', '--agent', agent], stderr: 'ignore',
  }));
  const chief = await open('dchief');
  const dw1 = await open('dw1');
  const roomLen = () => JSON.parse(huddle('chat', 'read', 'dele', '--json', '--limit', '500')).posts.length;
  const taskCount = () => JSON.parse(huddle('task', 'list', 'dele', '--json')).length;
  try {
    const { tools } = await chief.listTools();
    const tool = tools.find((t) => t.name === 'team_delegate');
    assert.ok(tool, 'team_delegate listed');
    assert.deepEqual(tool.inputSchema.required, ['assignee', 'task']);
    assert.ok(tools.find((t) => t.name === 'task_create').inputSchema.properties.parent_task_id);

    const got = result(await chief.callTool({
      name: 'team_delegate',
      arguments: { assignee: 'dw1', task: 'Fix the parser', description: 'tests in tests/parse', priority: 2 },
    }));
    const P = got.task.id;
    assert.equal(got.assignee, 'dw1');
    assert.deepEqual([got.task.status, got.task.owner, got.task.priority, got.task.created_by, got.task.parent_id],
      ['claimed', 'dw1', 2, 'dchief', null]);
    const mail = result(await dw1.callTool({ name: 'inbox_read', arguments: {} })).messages;
    assert.equal(mail.length, 1);
    assert.deepEqual([mail[0].type, mail[0].from_agent, mail[0].content],
      ['task_update', 'dchief', `You were delegated task #${P} "Fix the parser" by dchief: tests in tests/parse`]);
    const room = JSON.parse(huddle('chat', 'read', 'dele', '--json', '--limit', '500')).posts;
    assert.equal(room.at(-1).body, `Task #${P} "Fix the parser" delegated to dw1 by dchief.`);

    // refusals: not the leader, outside the team, error, shutdown
    huddle('agent', 'set-status', 'dw2', 'error');
    huddle('agent', 'set-status', 'dw3', 'shutdown');
    const [tasks0, posts0] = [taskCount(), roomLen()];
    for (const [client, assignee, text] of [
      [dw1, 'dw2', 'only the team leader or a user may delegate, not dw1'],
      [chief, 'sre', 'no member "sre" in team dele'],
      [chief, 'dw2', 'cannot delegate to dw2: it is in error'],
      [chief, 'dw3', 'cannot delegate to dw3: it is in shutdown'],
    ]) {
      const res = await client.callTool({ name: 'team_delegate', arguments: { assignee, task: 'Nope' } });
      assert.equal(res.isError, true);
      assert.equal(res.content[0].text, text);
    }
    assert.deepEqual([taskCount(), roomLen()], [tasks0, posts0]);
    const missing = await chief.callTool({ name: 'team_delegate', arguments: { assignee: 'dw1' } });
    assert.equal(missing.isError, true);
    assert.equal(missing.content[0].text, 'missing required argument "task"');

    // subtasks and the caps
    huddle('team', 'update', 'dele', '--max-children', '2', '--max-task-depth', '1',
      '--max-new-roots', '1', '--new-roots-window', '60');
    const c1 = result(await dw1.callTool({ name: 'task_create', arguments: { subject: 'Lexer', parent_task_id: P } })).task;
    assert.equal(c1.parent_id, P);
    const c2 = result(await chief.callTool({
      name: 'team_delegate', arguments: { assignee: 'dw1', task: 'Grammar', parent_task_id: P },
    })).task;
    // dw1 reads its new mail first: a result carrying mail has no
    // structuredContent (the piggyback)
    const more = result(await dw1.callTool({ name: 'inbox_read', arguments: {} })).messages;
    assert.deepEqual(more.map((m) => m.content),
      [`You were delegated task #${c2.id} "Grammar" by dchief.`]);
    const parent = result(await dw1.callTool({ name: 'task_get', arguments: { task_id: P } })).task;
    assert.deepEqual(parent.children, [c1.id, c2.id]);
    const refuse = async (client, args, text) => {
      const res = await client.callTool({ name: 'task_create', arguments: args });
      assert.equal(res.isError, true);
      assert.equal(res.content[0].text, text);
    };
    await refuse(dw1, { subject: 'Third', parent_task_id: P },
      `task ${P} already has 2 subtasks (the team's max_children); finish or cancel some, or raise it with huddle team update dele --max-children N`);
    await refuse(dw1, { subject: 'Deep', parent_task_id: c1.id },
      `a subtask of task ${c1.id} would be at depth 2, deeper than the team's max_task_depth 1 (a root task is at depth 0); add it under a shallower task, or raise it with huddle team update dele --max-task-depth N`);
    result(await dw1.callTool({ name: 'task_create', arguments: { subject: 'Root one' } }));
    await refuse(dw1, { subject: 'Root two' },
      'dw1 already created 1 root task in the last 60 s (the team\'s max_new_roots); make this a subtask of one of them, wait, or raise it with huddle team update dele --max-new-roots N');
    await refuse(dw1, { subject: 'Bad', parent_task_id: 0 }, 'parent_task_id must be a task id (a positive integer)');

    // the parent waits for its open subtasks
    const early = await dw1.callTool({ name: 'task_complete', arguments: { task_id: P } });
    assert.equal(early.isError, true);
    assert.equal(early.content[0].text, `task ${P} cannot complete: its subtasks #${c1.id}, #${c2.id} are still open`);
    result(await dw1.callTool({ name: 'task_claim', arguments: { task_id: c1.id } }));
    result(await dw1.callTool({ name: 'task_complete', arguments: { task_id: c1.id } }));
    result(await dw1.callTool({ name: 'task_complete', arguments: { task_id: c2.id } }));
    result(await dw1.callTool({ name: 'task_comment', arguments: { task_id: P, body: 'all in' } }));
    const last = JSON.parse(huddle('chat', 'read', 'dele', '--json', '--limit', '500')).posts.at(-1);
    assert.equal(last.body, `Comment on task #${P} "Fix the parser" by dw1: all in`);
    const done = result(await dw1.callTool({ name: 'task_complete', arguments: { task_id: P } })).task;
    assert.equal(done.status, 'completed');
  } finally {
    await chief.close();
    await dw1.close();
  }
});

test('stdio: a bound session ignores identity arguments', async () => {
  const coder = await stdioClient('coder');
  try {
    const posted = result(await coder.callTool({
      name: 'team_chat_post',
      arguments: { text: 'spoof attempt', authorAgentId: 'manager', teamId: 'ops', roomId: 'team:ops' },
    })).posted;
    assert.equal(posted.authorAgentId, 'coder');
    assert.equal(posted.roomId, 'team:dev');
  } finally {
    await coder.close();
  }
});

test('http: a bound URL ignores identity arguments', async () => {
  const coder = await httpClient(attachUrl('coder'));
  try {
    const posted = result(await coder.callTool({
      name: 'team_chat_post',
      arguments: { text: 'spoof over http', authorAgentId: 'manager', teamId: 'ops' },
    })).posted;
    assert.equal(posted.authorAgentId, 'coder');
    assert.equal(posted.roomId, 'team:dev');
    const room = JSON.parse(huddle('chat', 'read', 'dev', '--json'));
    const stored = room.posts.find((p) => p.seq === posted.seq);
    assert.equal(stored.authorAgentId, 'coder');
    assert.equal(stored.body, 'spoof over http');
  } finally {
    await coder.close();
  }
});

// Posts over HTTP are group-committed (src/room/batch.c): posts sent
// together share transactions, yet each reply comes only after its own
// post committed, and a refused post fails alone.
test('http: concurrent posts each answer once committed; a refused one fails alone', async () => {
  const clients = await Promise.all(['coder', 'reviewer'].map((a) => httpClient(attachUrl(a))));
  try {
    const calls = [];
    for (let i = 0; i < 12; i++) {
      const text = i === 5 ? '' : `burst ${i}`;
      calls.push(clients[i % 2].callTool({ name: 'team_chat_post', arguments: { text } }));
    }
    const replies = await Promise.all(calls);
    const refused = replies[5];
    assert.equal(refused.isError, true);
    assert.equal(refused.content[0].text, 'post body must not be empty');
    const posted = replies.filter((r, i) => i !== 5).map((r) => result(r).posted);
    assert.equal(new Set(posted.map((p) => p.seq)).size, posted.length, 'distinct seqs');
    const room = JSON.parse(huddle('chat', 'read', 'dev', '--json', '--limit', '500'));
    posted.forEach((p, k) => {
      const i = k < 5 ? k : k + 1;
      const stored = room.posts.find((q) => q.seq === p.seq);
      assert.ok(stored, `post ${p.seq} is stored`);
      assert.equal(stored.body, `burst ${i}`);
      assert.equal(stored.authorAgentId, i % 2 ? 'reviewer' : 'coder');
    });
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
});

// Any URL without coder's valid sig is served unbound and read-only.
test('http: forged, foreign, altered and extended URLs are read-only', async () => {
  const good = attachUrl('coder');
  const sig = new URL(good).searchParams.get('sig');
  const other = new URL(attachUrl('reviewer')).searchParams.get('sig');
  const flipped = sig.slice(0, 10) + (sig[10] === 'a' ? 'b' : 'a') + sig.slice(11);
  const bare = `http://127.0.0.1:${port}/mcp`;
  const cases = {
    'no sig': `${bare}?roomTeamId=dev&postAuthorAgentId=coder`,
    "another agent's sig": `${bare}?roomTeamId=dev&postAuthorAgentId=coder&sig=${other}`,
    'a flipped hex digit': `${bare}?roomTeamId=dev&postAuthorAgentId=coder&sig=${flipped}`,
    'an added parameter': `${good}&extra=1`,
    'no parameters': bare,
  };
  for (const [why, url] of Object.entries(cases)) {
    const client = await httpClient(url);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(names, ['memory_search', 'task_get', 'task_list', 'team_chat_subscribe', 'team_state'], why);
      const res = await client.callTool({
        name: 'team_chat_post', arguments: { text: 'should not land', authorAgentId: 'coder', teamId: 'dev' },
      });
      assert.equal(res.isError, true, why);
      assert.match(res.content[0].text, /^this connection is read-only/, why);
      // Reading still works, with the team named in the arguments.
      const read = await client.callTool({ name: 'team_chat_subscribe', arguments: { teamId: 'dev' } });
      assert.equal(read.isError, undefined, why);
    } finally {
      await client.close();
    }
  }
  const room = JSON.parse(huddle('chat', 'read', 'dev', '--json', '--limit', '500'));
  assert.equal(room.posts.filter((p) => p.body === 'should not land').length, 0);
});

test('stdio unbound: identity comes from the arguments, and is asked for', async () => {
  const client = await connect(new StdioClientTransport({
    command: HUDDLE, args: [...AT, 'mcp'], stderr: 'ignore',
  }));
  try {
    const missing = await client.callTool({ name: 'team_chat_post', arguments: { text: 'x' } });
    assert.equal(missing.isError, true);
    assert.equal(missing.content[0].text, 'no bound identity: pass authorAgentId + teamId (unbound mode)');
    const ok = result(await client.callTool({
      name: 'team_chat_post', arguments: { text: 'unbound post', authorAgentId: 'tester', teamId: 'dev' },
    }));
    assert.equal(ok.posted.authorAgentId, 'tester');
  } finally {
    await client.close();
  }
});

// One validation rule on every surface: this table mirrors the ones in
// tests/unit/room/test-validate.c (the library) and
// tests/e2e/test-post-validate.sh (CLI and REST); keep the three in step.
// Invalid UTF-8 is left out here: JSON cannot carry it.
const BAD_POSTS = [
  ['empty', 'dev', 'coder', '', 'post body must not be empty'],
  ['spaces', 'dev', 'coder', '   ', 'post body must not be empty'],
  ['whitespace mix', 'dev', 'coder', ' \t\r\n\v\f', 'post body must not be empty'],
  ['newlines', 'dev', 'coder', '\n\n', 'post body must not be empty'],
  ['too long', 'dev', 'coder', 'a'.repeat(100001), 'post body is 100001 bytes; the limit is 100000'],
  ['unknown team', 'ghost', 'coder', 'hello', 'team "ghost" not found'],
  ['non-member author', 'dev', 'sre', 'hello', 'no member "sre" in team dev'],
];

test('team_chat_post refuses the bad-post table with the library\'s texts', async () => {
  const unbound = await connect(new StdioClientTransport({
    command: HUDDLE, args: [...AT, 'mcp'], stderr: 'ignore',
  }));
  const bound = await httpClient(attachUrl('coder'));
  try {
    const head = JSON.parse(huddle('chat', 'read', 'dev', '--json', '--limit', '500')).nextSeq;
    for (const [name, team, author, text, want] of BAD_POSTS) {
      const res = await unbound.callTool({
        name: 'team_chat_post', arguments: { text, authorAgentId: author, teamId: team },
      });
      assert.equal(res.isError, true, `stdio: ${name}`);
      assert.equal(res.content[0].text, want, `stdio: ${name}`);
      if (team !== 'dev' || author !== 'coder') continue;
      const viaHttp = await bound.callTool({ name: 'team_chat_post', arguments: { text } });
      assert.equal(viaHttp.isError, true, `http: ${name}`);
      assert.equal(viaHttp.content[0].text, want, `http: ${name}`);
    }
    const after = JSON.parse(huddle('chat', 'read', 'dev', '--json', '--limit', '500', '--since', String(head)));
    assert.equal(after.posts.length, 0, 'no refused post was stored');
  } finally {
    await unbound.close();
    await bound.close();
  }
});

// teammate_spawn takes what `huddle agent spawn` takes, checked the same
// way, and refuses an argument it does not know instead of dropping it.
test('stdio: teammate_spawn with runtime, runtime_config and model; unknown arguments refused', async () => {
  // the leader's mail so far (idle notices of the tests before) is read
  // here, so the results below carry no piggybacked mail
  huddle('inbox', 'manager');
  const manager = await stdioClient('manager');
  try {
    const { agent } = result(await manager.callTool({
      name: 'teammate_spawn',
      arguments: {
        name: 'mcp-scout', task: 'Map the repo', role: 'scout', runtime: 'claude-code',
        runtime_config: { workdir: '/src', max_turns: 4 }, model: 'sonnet',
      },
    }));
    assert.equal(agent.spawned_by, 'manager');
    assert.equal(agent.spawn_depth, 1);
    const stored = JSON.parse(huddle('agent', 'show', 'mcp-scout', '--json'));
    assert.equal(stored.runtime, 'claude-code');
    assert.equal(stored.role, 'scout');
    assert.deepEqual(stored.runtime_config, { max_turns: 4, model: 'sonnet', workdir: '/src' });

    const typo = await manager.callTool({ name: 'teammate_spawn', arguments: { name: 'mcp-typo', modle: 'sonnet' } });
    assert.equal(typo.isError, true);
    assert.equal(typo.content[0].text,
      'unknown argument "modle" to teammate_spawn: use name, task, role, runtime, runtime_config, model, replaces');
    const bad = await manager.callTool({
      name: 'teammate_spawn', arguments: { name: 'mcp-typo', runtime: 'codex', runtime_config: { modle: 'x' } },
    });
    assert.equal(bad.isError, true);
    assert.equal(bad.content[0].text, 'runtime_config: unknown key "modle" for runtime codex');
    const unbuilt = await manager.callTool({ name: 'teammate_spawn', arguments: { name: 'mcp-typo', runtime: 'x' } });
    assert.equal(unbuilt.isError, true);
    assert.equal(unbuilt.content[0].text,
      'runtime "x" is not available in this build: use scripted, exec, claude-code, codex, native, hermes or openclaw');
    const names = JSON.parse(huddle('agent', 'list', 'dev', '--json')).map((a) => a.id);
    assert.ok(!names.includes('mcp-typo'), 'nothing written by the refusals');
  } finally {
    await manager.close();
  }
});

// The leader replaces a failed member over MCP: the new agent takes its
// open tasks, in one transaction, and hears of them in its first message.
test('stdio: teammate_spawn with replaces takes over a failed member\'s tasks', async () => {
  huddle('agent', 'add', 'dev', 'mcp-worker', '--role', 'worker');
  const t1 = JSON.parse(huddle('--json', 'task', 'create', 'dev', 'Port the parser')).id;
  const t2 = JSON.parse(huddle('--json', 'task', 'create', 'dev', 'Bench the parser')).id;
  huddle('task', 'claim', String(t1), '--as', 'mcp-worker');
  huddle('task', 'claim', String(t2), '--as', 'mcp-worker');
  huddle('task', 'start', String(t2), '--as', 'mcp-worker');
  huddle('agent', 'set-status', 'mcp-worker', 'error');
  const manager = await stdioClient('manager');
  const reviewer = await stdioClient('reviewer');
  try {
    const leader = await manager.callTool({ name: 'teammate_spawn', arguments: { name: 'x-lead', replaces: 'manager' } });
    assert.equal(leader.isError, true);
    assert.equal(leader.content[0].text, 'cannot replace the leader (manager) of team dev');
    const member = await reviewer.callTool({ name: 'teammate_spawn', arguments: { name: 'x-worker', replaces: 'mcp-worker' } });
    assert.equal(member.isError, true);
    assert.equal(member.content[0].text, 'only the team leader or a user may replace mcp-worker, not reviewer');
    const ghost = await manager.callTool({ name: 'teammate_spawn', arguments: { name: 'x-worker', replaces: 'ghost' } });
    assert.equal(ghost.content[0].text, 'no member "ghost" in team dev');
    assert.equal(JSON.parse(huddle('task', 'show', String(t1), '--json')).owner, 'mcp-worker', 'refusals moved nothing');

    const res = result(await manager.callTool({
      name: 'teammate_spawn', arguments: { name: 'mcp-worker-2', replaces: 'mcp-worker', task: 'Carry on' },
    }));
    assert.equal(res.replaced, 'mcp-worker');
    assert.deepEqual(res.took_over, [
      { id: t1, subject: 'Port the parser', status: 'claimed' },
      { id: t2, subject: 'Bench the parser', status: 'in_progress' },
    ]);
    assert.equal(res.agent.role, 'worker');
    assert.equal(res.agent.spawned_by, 'manager');
    const old = JSON.parse(huddle('agent', 'show', 'mcp-worker', '--json'));
    assert.equal(old.status, 'shutdown');
    assert.equal(old.status_reason, 'replaced by mcp-worker-2');
    const task = JSON.parse(huddle('task', 'show', String(t2), '--json'));
    assert.equal(task.owner, 'mcp-worker-2');
    assert.equal(task.status, 'in_progress');
    assert.equal(task.comments[0].body,
      'moved from mcp-worker to mcp-worker-2: mcp-worker is in error; mcp-worker-2 replaces it');
    const inbox = JSON.parse(huddle('inbox', 'mcp-worker-2', '--json'));
    assert.equal(inbox[0].content,
      `Carry on\n\nYou replace mcp-worker, who is in error. You took over its unfinished tasks:\n` +
      `  - #${t1} "Port the parser" (claimed)\n  - #${t2} "Bench the parser" (in_progress)`);
  } finally {
    await manager.close();
    await reviewer.close();
  }
});

// A shutdown_response needs no recipient: it goes to whoever asked, the
// leader of a team shutdown or the sender of a request sent one to one.
test('stdio: a shutdown_response without recipient reaches whoever asked', async () => {
  huddle('team', 'create', 'wind');
  huddle('agent', 'add', 'wind', 'w-lead', '--leader');
  huddle('agent', 'add', 'wind', 'w-one');
  huddle('agent', 'add', 'wind', 'w-two');
  huddle('send', '--team', 'wind', '--from', 'w-lead', '--to', 'w-one', '--type', 'shutdown_request',
    '--request-id', 'stop-w1', 'stop please');
  const bound = (agent) => connect(new StdioClientTransport({
    command: HUDDLE, args: [...AT, 'mcp', '--team', 'wind', '--agent', agent], stderr: 'ignore',
  }));
  // a result may carry the agent's mail (and then no structuredContent)
  const sent = (res) => {
    assert.equal(res.isError, undefined, `tool failed: ${res.content?.[0]?.text}`);
    return JSON.parse(res.content[0].text);
  };
  const one = await bound('w-one');
  const two = await bound('w-two');
  try {
    const r1 = sent(await one.callTool({
      name: 'send_message',
      arguments: { type: 'shutdown_response', request_id: 'stop-w1', approve: true, content: 'stopping' },
    }));
    assert.equal(r1.answered, 'stop-w1');
    assert.equal(r1.sent.to_agent, 'w-lead');
    assert.equal(r1.sent.type, 'shutdown_response');
    assert.equal(JSON.parse(huddle('agent', 'show', 'w-one', '--json')).status, 'shutdown');

    const unknown = await two.callTool({
      name: 'send_message',
      arguments: { type: 'shutdown_response', request_id: 'stop-nope', approve: true, content: 'x' },
    });
    assert.equal(unknown.isError, true);
    assert.equal(unknown.content[0].text, 'no shutdown request "stop-nope" in team wind');
    const none = await two.callTool({
      name: 'send_message', arguments: { type: 'shutdown_response', approve: true, content: 'x' },
    });
    assert.equal(none.isError, true);
    assert.equal(none.content[0].text, 'shutdown_response needs a request_id');
    const plain = await two.callTool({ name: 'send_message', arguments: { content: 'x' } });
    assert.equal(plain.content[0].text, 'recipient is required unless type is broadcast or shutdown_response');

    huddle('agent', 'set-status', 'w-two', 'working');
    const rid = JSON.parse(huddle('--json', 'team', 'shutdown', 'wind')).request_id;
    const r2 = sent(await two.callTool({
      name: 'send_message',
      arguments: { type: 'shutdown_response', request_id: rid, approve: true, content: 'done here' },
    }));
    assert.equal(r2.sent.to_agent, 'w-lead');
    assert.equal(JSON.parse(huddle('team', 'show', 'wind', '--json')).status, 'shutdown');
    const lead = JSON.parse(huddle('inbox', 'w-lead', '--json'));
    assert.deepEqual(lead.map((m) => `${m.from_agent} ${m.request_id} ${m.approve}`),
      ['w-one stop-w1 true', `w-two ${rid} true`]);
  } finally {
    await one.close();
    await two.close();
  }
});

// Issue 21 items 1-2 over MCP: a member's acts through its tools make its
// status and activity true in team_state, finishing its started work
// sends the leader the idle notice (piggybacked on the leader's next tool
// result), and a shutdown completes when its members go idle. A team of
// its own, so no other test's mail or statuses mix in.
test('stdio: team_state tells the truth; idle notices; a shutdown completes on idle', async () => {
  huddle('team', 'create', 'live');
  huddle('agent', 'add', 'live', 'chief', '--leader');
  huddle('agent', 'add', 'live', 'maker');
  const client = (agent) => connect(new StdioClientTransport({
    command: HUDDLE, args: [...AT, 'mcp', '--team', 'live', '--agent', agent], stderr: 'ignore',
  }));
  const chief = await client('chief');
  const maker = await client('maker');
  const member = (state, id) => state.members.find((m) => m.id === id);
  try {
    let state = result(await chief.callTool({ name: 'team_state', arguments: {} }));
    assert.deepEqual([member(state, 'maker').status, member(state, 'maker').last_active_at], ['idle', null]);
    assert.match(state.text, /\n {2}- maker \(Member\): idle\n/);

    const id = result(await chief.callTool({ name: 'task_create', arguments: { subject: 'Build it' } })).task.id;
    result(await maker.callTool({ name: 'task_claim', arguments: { task_id: id } }));
    result(await maker.callTool({ name: 'task_start', arguments: { task_id: id } }));
    state = result(await chief.callTool({ name: 'team_state', arguments: {} }));
    const m = member(state, 'maker');
    assert.equal(m.status, 'working');
    assert.equal(typeof m.last_active_at, 'number');
    assert.deepEqual(m.tasks, [{ id, subject: 'Build it', status: 'in_progress' }]);
    assert.ok(state.text.includes(`  - maker (Member): working; holds #${id} "Build it" (in_progress); last active just now\n`),
      state.text);

    // the leader asks for a shutdown: maker works, so the team waits
    const asked = result(await chief.callTool({ name: 'team_shutdown', arguments: {} }));
    assert.deepEqual(asked.shutdown?.pending ?? asked.pending, ['maker']);
    // maker finishes its started task: idle, which approves (its result
    // carries the shutdown_request as mail)
    const done = await maker.callTool({ name: 'task_complete', arguments: { task_id: id, result: 'built' } });
    assert.equal(done.isError, undefined);
    assert.equal(JSON.parse(done.content[0].text).task.status, 'completed');
    assert.ok(done.content[1].text.includes('type="shutdown_request"'), done.content[1].text);
    const team = JSON.parse(huddle('--json', 'team', 'show', 'live'));
    assert.equal(team.status, 'shutdown');
    // the leader's next result carries the idle notice as mail
    const after = await chief.callTool({ name: 'team_state', arguments: {} });
    const mail = after.content.map((c) => c.text).join('\n');
    assert.ok(mail.includes('<teammate-message teammate_id="maker" type="idle" summary="maker is idle">\n'
      + `maker is idle; last finished task #${id} "Build it" (completed)\n</teammate-message>`), mail);
  } finally {
    await chief.close();
    await maker.close();
  }
});
