// tls.test.mjs -- the official MCP TypeScript SDK client against `huddle
// serve` over HTTPS. Run by test-tls.sh with the server already up:
// ATTACH_URL (the signed https URL `huddle attach` printed), HUDDLE_TOKEN
// (the bearer token, sent as a header as the attach configs do) and
// NODE_EXTRA_CA_CERTS (the test's CA) in the environment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.env.ATTACH_URL);
const token = process.env.HUDDLE_TOKEN;

async function connect(headers) {
  const client = new Client({ name: 'huddle-tls-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}

test('the attach URL is https and holds no token', () => {
  assert.equal(url.protocol, 'https:');
  assert.ok(!url.href.includes(token), 'the bearer token is not in the URL');
});

test('the SDK client connects over TLS with the token and posts as the bound agent', async () => {
  const client = await connect({ Authorization: `Bearer ${token}` });
  const { tools } = await client.listTools();
  assert.ok(tools.some((t) => t.name === 'team_chat_post'), 'team_chat_post is listed');
  const res = await client.callTool({ name: 'team_chat_post', arguments: { text: 'over tls from the sdk' } });
  assert.equal(res.isError, undefined, `tool failed: ${res.content?.[0]?.text}`);
  assert.equal(res.structuredContent.posted.authorAgentId, 'coder');
  await client.close();
});

test('the SDK client without the token is refused', async () => {
  await assert.rejects(connect({}), /401|bearer token/);
});

test('the SDK client with a wrong token is refused', async () => {
  await assert.rejects(connect({ Authorization: 'Bearer wrong-token' }), /401|bearer token/);
});
