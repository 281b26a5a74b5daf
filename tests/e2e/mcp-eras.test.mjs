// mcp-eras.test.mjs -- huddle driven by the MCP TypeScript SDK's v2
// client (@modelcontextprotocol/client) in each of its eras: 'legacy'
// (the 2025 initialize handshake), 'auto' (probes server/discover, which
// huddle answers, so it lands on 2026-07-28) and the modern era pinned to
// 2026-07-28; each posts, subscribes and claims over Streamable HTTP with
// a signed attach URL and over stdio bound with --team/--agent. Run by
// test-conformance.sh with HUDDLE and HUDDLE_HOME (holding team dev) set.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

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

const ERAS = {
  legacy: { mode: 'legacy', era: 'legacy', version: '2025-11-25' },
  auto: { mode: 'auto', era: 'modern', version: '2026-07-28' },
  modern: { mode: { pin: '2026-07-28' }, era: 'modern', version: '2026-07-28' },
};

async function connect(eraName, transport) {
  const client = new Client({ name: 'huddle-eras', version: '1.0.0' },
    { versionNegotiation: { mode: ERAS[eraName].mode } });
  await client.connect(transport);
  return client;
}

const transports = {
  http: (agent) => new StreamableHTTPClientTransport(new URL(attachUrl(agent))),
  stdio: (agent) => new StdioClientTransport({
    command: HUDDLE,
    args: [...AT, 'mcp', '--team', 'dev', '--agent', agent],
    stderr: 'ignore',
  }),
};

function result(res) {
  assert.equal(res.isError, undefined, `tool failed: ${res.content?.[0]?.text}`);
  return res.structuredContent ?? JSON.parse(res.content[0].text);
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

for (const eraName of Object.keys(ERAS)) {
  for (const tname of Object.keys(transports)) {
    test(`${eraName} over ${tname}: post, subscribe, contested claim`, async () => {
      const coder = await connect(eraName, transports[tname]('coder'));
      const reviewer = await connect(eraName, transports[tname]('reviewer'));
      try {
        assert.equal(coder.getProtocolEra(), ERAS[eraName].era);
        assert.equal(coder.getNegotiatedProtocolVersion(), ERAS[eraName].version);
        const { tools } = await coder.listTools();
        assert.ok(tools.some((t) => t.name === 'team_chat_post'));

        const since = result(await reviewer.callTool({ name: 'team_chat_subscribe', arguments: {} })).nextSeq;
        const text = `${eraName} over ${tname}`;
        const posted = result(await coder.callTool({ name: 'team_chat_post', arguments: { text } })).posted;
        // identity comes from the attach, in either era
        assert.equal(posted.authorAgentId, 'coder');
        assert.equal(posted.roomId, 'team:dev');
        const seen = result(await reviewer.callTool({ name: 'team_chat_subscribe', arguments: { sinceSeq: since } }));
        const mine = seen.posts.find((p) => p.seq === posted.seq);
        assert.ok(mine, 'reviewer sees the post');
        assert.equal(mine.authorAgentId, 'coder');
        assert.match(mine.wrapped, new RegExp(`\\| ${text}$`));

        const task = result(await coder.callTool({ name: 'task_create', arguments: { subject: `claim ${text}` } })).task;
        const claims = await Promise.all([
          coder.callTool({ name: 'task_claim', arguments: { task_id: task.id } }),
          reviewer.callTool({ name: 'task_claim', arguments: { task_id: task.id } }),
        ]);
        const winners = claims.filter((c) => !c.isError);
        assert.equal(winners.length, 1, 'exactly one claim wins');
        const owner = result(winners[0]).task.owner;
        assert.ok(owner === 'coder' || owner === 'reviewer');
        assert.equal(claims.find((c) => c.isError).content[0].text,
          `task ${task.id} is already claimed by ${owner}`);
      } finally {
        await coder.close();
        await reviewer.close();
      }
    });
  }
}
