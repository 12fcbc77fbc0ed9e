// SPDX-License-Identifier: Apache-2.0
// Drives an MCP stdio server with the official TypeScript SDK client, then
// with raw lines the SDK would never send, and exits non-zero on the first
// mismatch. Written against tests/mcp/demo_registry.cc (mcp_demo_server).
//
//   node tests/node/mcp_interop.mjs -- build/tests/mcp/mcp_demo_server
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { check, checkEqual, checksMade, loadSdk, Mismatch, textOf } from './mcp_checks.mjs';

const TIMEOUT_MS = 30_000;
const LATEST = '2025-06-18';
const INVALID_REQUEST = -32600;
const PARSE_ERROR = -32700;
const INVALID_PARAMS = -32602;
const RESOURCE_NOT_FOUND = -32002;

// The request must fail with a JSON-RPC error `code` whose message holds `words`.
async function checkRpcError(promise, code, words, what) {
  let result;
  try {
    result = await promise;
  } catch (error) {
    check(error?.code === code, `${what}: expected error ${code}, got ${error?.code} (${error?.message})`);
    check(String(error.message).includes(words), `${what}: error message lacks "${words}": ${error.message}`);
    return;
  }
  throw new Mismatch(`${what}: expected error ${code}, got the result ${JSON.stringify(result)}`);
}

function serverCommand(argv) {
  const dashes = argv.indexOf('--');
  const command = dashes < 0 ? [] : argv.slice(dashes + 1);
  if (command.length === 0) {
    console.error('usage: node tests/node/mcp_interop.mjs -- SERVER [ARGS...]');
    process.exit(2);
  }
  return { command: command[0], args: command.slice(1) };
}

async function checkTools(client) {
  const { tools, nextCursor } = await client.listTools();
  checkEqual(tools.map((t) => t.name), ['add', 'lookup_run', 'echo'], 'tools/list names');
  check(nextCursor === undefined, 'tools/list has no nextCursor');
  for (const tool of tools) {
    check(tool.title && tool.description, `tool ${tool.name} has a title and a description`);
    check(tool.inputSchema?.type === 'object', `tool ${tool.name} inputSchema is an object schema`);
    check(tool.outputSchema?.type === 'object', `tool ${tool.name} outputSchema is an object schema`);
  }

  // callTool validates structuredContent against the outputSchema listed above.
  const add = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
  check(!add.isError, 'add succeeds');
  checkEqual(add.structuredContent, { sum: 42 }, 'add structuredContent');
  checkEqual(textOf(add), '2 + 40 = 42', 'add text');

  const run = await client.callTool({ name: 'lookup_run', arguments: { run: 2, verbose: true } });
  checkEqual(run.structuredContent, { run: 2, name: 'loader w=2', events: 48000, note: '48000 events recorded' },
             'lookup_run structuredContent');
  const quiet = await client.callTool({ name: 'lookup_run', arguments: { run: 1 } });
  check(quiet.structuredContent.note === null, 'lookup_run without verbose has a null note');

  const echo = await client.callTool({ name: 'echo', arguments: { text: 'hi', times: 2, style: 'shout' } });
  checkEqual(echo.structuredContent, { text: 'HI HI', length: 5, words: ['HI', 'HI'] }, 'echo structuredContent');
}

async function checkToolErrors(client) {
  // The tool's own failure is a result, not a protocol error.
  const missing = await client.callTool({ name: 'lookup_run', arguments: { run: 99 } });
  check(missing.isError === true, `lookup_run 99 is an isError result: ${JSON.stringify(missing)}`);
  const text = textOf(missing);
  check(text.includes('run 99 does not exist') && text.includes('fix: '), `lookup_run 99 explains itself: ${text}`);

  await checkRpcError(client.callTool({ name: 'no_such_tool', arguments: {} }), INVALID_PARAMS,
                      "unknown tool 'no_such_tool'; known: add, lookup_run, echo", 'unknown tool');
  await checkRpcError(client.callTool({ name: 'lookup_run', arguments: { run: '7' } }), INVALID_PARAMS,
                      "argument 'run' must be an integer", 'lookup_run with a string run');
  await checkRpcError(client.callTool({ name: 'add', arguments: { a: 1 } }), INVALID_PARAMS,
                      "argument 'b' is required", 'add without b');
  await checkRpcError(client.callTool({ name: 'echo', arguments: { text: '' } }), INVALID_PARAMS,
                      "argument 'text' must be at least 1 character long", 'echo with an empty text');

  checkEqual(await client.ping(), {}, 'ping after errors');
  const again = await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } });
  checkEqual(again.structuredContent, { sum: 2 }, 'a tool call after errors');
}

async function checkPrompts(client) {
  const { prompts } = await client.listPrompts();
  checkEqual(prompts.map((p) => p.name), ['explain_run'], 'prompts/list names');
  checkEqual(prompts[0].arguments.map((a) => [a.name, a.required]), [['run', true], ['focus', false]],
             'explain_run arguments');

  const full = await client.getPrompt({ name: 'explain_run', arguments: { run: '2', focus: 'workers' } });
  checkEqual(full.messages, [{ role: 'user', content: { type: 'text',
    text: 'Explain where the time of run 2 went. Look at workers first.' } }], 'explain_run messages');
  check(typeof full.description === 'string', 'prompts/get has a description');
  const bare = await client.getPrompt({ name: 'explain_run', arguments: { run: '1' } });
  checkEqual(bare.messages[0].content.text, 'Explain where the time of run 1 went.', 'explain_run without focus');

  await checkRpcError(client.getPrompt({ name: 'explain_run', arguments: {} }), INVALID_PARAMS,
                      "missing required argument 'run'", 'explain_run without run');
  await checkRpcError(client.getPrompt({ name: 'nope' }), INVALID_PARAMS, "unknown prompt 'nope'", 'unknown prompt');
}

async function checkResources(client) {
  const { resources } = await client.listResources();
  checkEqual(resources.map((r) => r.uri),
             ['ingero://demo/readme', 'ingero://demo/runs/1', 'ingero://demo/runs/2', 'ingero://demo/runs/3'],
             'resources/list URIs');
  const { resourceTemplates } = await client.listResourceTemplates();
  checkEqual(resourceTemplates.map((t) => [t.uriTemplate, t.mimeType]),
             [['ingero://demo/runs/{run}', 'application/json']], 'resources/templates/list');

  for (const resource of resources) {
    const { contents } = await client.readResource({ uri: resource.uri });
    check(contents.length === 1 && contents[0].uri === resource.uri, `read ${resource.uri} returns it`);
    check(contents[0].mimeType === resource.mimeType, `read ${resource.uri} keeps its mimeType`);
    check(typeof contents[0].text === 'string' && contents[0].text.length > 0, `read ${resource.uri} has text`);
  }
  const fromTemplate = resourceTemplates[0].uriTemplate.replace('{run}', '3');
  const { contents } = await client.readResource({ uri: fromTemplate });
  checkEqual(JSON.parse(contents[0].text).name, 'loader w=8', `read ${fromTemplate}`);

  await checkRpcError(client.readResource({ uri: 'ingero://demo/runs/42' }), RESOURCE_NOT_FOUND,
                      'resource not found', 'unknown resource');
  checkEqual(await client.ping(), {}, 'ping after a missing resource');
}

async function withSdkClient(server) {
  const { Client, StdioClientTransport } = await loadSdk();
  const transport = new StdioClientTransport({ ...server, stderr: 'pipe' });
  let log = '';
  transport.stderr?.on('data', (chunk) => { log += chunk; });
  const client = new Client({ name: 'ingero-bench-interop', version: '1.0.0' });
  // A line on stdout that is not JSON-RPC (a stray log) surfaces here.
  const transportErrors = [];
  client.onerror = (error) => transportErrors.push(error.message);

  try {
    await client.connect(transport);  // the SDK asks for its newest revision and accepts ours
    checkEqual(client.getServerVersion()?.name, 'ingero-bench-mcp-demo', 'serverInfo.name');
    const capabilities = client.getServerCapabilities();
    check(capabilities?.tools && capabilities?.prompts && capabilities?.resources,
          `capabilities list tools, prompts and resources: ${JSON.stringify(capabilities)}`);
    check(typeof client.getInstructions() === 'string', 'initialize returns instructions');

    await checkTools(client);
    await checkToolErrors(client);
    await checkPrompts(client);
    await checkResources(client);
    checkEqual(transportErrors, [], 'transport errors (non-JSON on stdout?)');
  } catch (error) {
    if (log) console.error(`server stderr:\n${log}`);
    throw error;
  } finally {
    await client.close();
  }
  check(log.includes('initialized by ingero-bench-interop'), `the server logs to stderr: ${JSON.stringify(log)}`);
}

// What the SDK never sends: garbage, batches, early requests, other revisions.
async function withRawLines(server) {
  const child = spawn(server.command, server.args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (chunk) => { log += chunk; });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exchange = async (line) => {
    child.stdin.write(`${line}\n`);
    const { value, done } = await lines.next();
    check(!done, `an answer to ${line}`);
    try {
      return JSON.parse(value);
    } catch {
      throw new Mismatch(`stdout line is not JSON: ${value}`);
    }
  };
  const request = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
  const initialize = (id, protocolVersion) =>
    request(id, 'initialize', { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '0' } });

  let reply = await exchange('{"jsonrpc": "2.0", "id": 1, "method": ');
  checkEqual([reply.id, reply.error?.code], [null, PARSE_ERROR], 'malformed JSON');
  reply = await exchange(`[${request(2, 'ping')}]`);
  checkEqual([reply.id, reply.error?.code], [null, INVALID_REQUEST], 'a batch');
  reply = await exchange(request(3, 'tools/list'));
  checkEqual(reply.error?.code, INVALID_REQUEST, 'tools/list before initialize');
  check(reply.error.message.includes('not initialized'), `says not initialized: ${reply.error.message}`);
  child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');  // no answer expected
  reply = await exchange(initialize(4, '2025-11-25'));
  checkEqual([reply.id, reply.result?.protocolVersion], [4, LATEST], 'a newer revision than ours');
  reply = await exchange(initialize(5, '2024-11-05'));
  checkEqual(reply.result?.protocolVersion, '2024-11-05', 'an older supported revision');
  reply = await exchange(request(6, 'ping'));
  checkEqual(reply, { jsonrpc: '2.0', id: 6, result: {} }, 'ping after the garbage (and the notification)');

  child.stdin.end();
  checkEqual(await exited, 0, 'exit status at end of input');
  const rest = await lines.next();
  check(rest.done, `nothing more on stdout: ${rest.value}`);
  check(log.includes('mcp:'), 'logs went to stderr');
}

async function main() {
  const server = serverCommand(process.argv);
  const timer = setTimeout(() => {
    console.error(`mcp_interop: FAIL: no end after ${TIMEOUT_MS / 1000} s`);
    process.exit(1);
  }, TIMEOUT_MS);
  await withSdkClient(server);
  await withRawLines(server);
  clearTimeout(timer);
  console.log(`mcp_interop: OK (${checksMade()} checks against ${server.command})`);
}

main().catch((error) => {
  const what = error instanceof Mismatch ? error.message : `unexpected: ${error?.stack ?? error}`;
  console.error(`mcp_interop: FAIL: ${what}`);
  process.exit(1);
});
