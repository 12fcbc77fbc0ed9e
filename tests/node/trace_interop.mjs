// SPDX-License-Identifier: Apache-2.0
// Drives `ingero-bench mcp --db DB` (or any server given after --) with the official
// TypeScript SDK client over a real trace DB: negotiates, lists tools, prompts and
// resources, calls every tool (the SDK validates each structuredContent against the
// tool's outputSchema), holds the numbers to `explain --json` for the same run, checks
// that run_sql refuses writes and ATTACH, and that the DB's bytes are unchanged.
//
//   node tests/node/trace_interop.mjs --db DB --run 5 --compare-with 8 --explain EXPLAIN.json \
//        -- SERVER [ARGS...]
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { check, checkEqual, checksMade, loadSdk, Mismatch, textOf } from './mcp_checks.mjs';

const TIMEOUT_MS = 60_000;
const TOOLS = ['list_runs', 'get_trace_stats', 'get_causal_chains', 'get_profile', 'get_per_process_breakdown',
               'compare_runs', 'get_recommendation', 'get_timeline', 'run_sql'];

function parseArgs(argv) {
  const dashes = argv.indexOf('--');
  const options = {};
  const flags = dashes < 0 ? argv : argv.slice(0, dashes);
  for (let i = 0; i < flags.length; i += 1) {
    if (flags[i].startsWith('--')) options[flags[i].slice(2)] = flags[i + 1];
  }
  const command = dashes < 0 ? [] : argv.slice(dashes + 1);
  if (command.length === 0 || !options.db || !options.run || !options.explain) {
    console.error('usage: node tests/node/trace_interop.mjs --db DB --run RUN [--compare-with RUN] '
                  + '--explain EXPLAIN.json -- SERVER [ARGS...]');
    process.exit(2);
  }
  return {
    db: options.db,
    run: Number(options.run),
    other: Number(options['compare-with'] ?? options.run),
    explain: JSON.parse(readFileSync(options.explain, 'utf8')),
    server: { command: command[0], args: command.slice(1) },
  };
}

const sha256 = (path) => createHash('sha256').update(readFileSync(path)).digest('hex');

// A successful call; the SDK has already checked structuredContent against the outputSchema.
async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  check(!result.isError, `${name} ${JSON.stringify(args)} succeeds: ${JSON.stringify(result.content)}`);
  check(typeof result.structuredContent === 'object', `${name} returns structuredContent`);
  check(textOf(result).length > 0, `${name} returns a text summary`);
  return result.structuredContent;
}

async function callFails(client, name, args, words) {
  const result = await client.callTool({ name, arguments: args });
  check(result.isError === true, `${name} ${JSON.stringify(args)} is an isError result: ${JSON.stringify(result)}`);
  const text = textOf(result);
  check(text.includes(words), `${name} ${JSON.stringify(args)} says "${words}": ${text}`);
}

async function checkListings(client, { run }) {
  const { tools } = await client.listTools();
  checkEqual(tools.map((t) => t.name), TOOLS, 'tools/list names');
  for (const tool of tools) {
    check(tool.description && tool.inputSchema?.type === 'object' && tool.outputSchema?.type === 'object',
          `tool ${tool.name} has a description, an inputSchema and an outputSchema`);
  }

  const { prompts } = await client.listPrompts();
  checkEqual(prompts.map((p) => p.name), ['investigate'], 'prompts/list names');
  const prompt = await client.getPrompt({ name: 'investigate', arguments: { run: String(run) } });
  const text = prompt.messages[0].content.text;
  for (const step of ['list_runs', `get_trace_stats {run: ${run}}`, 'get_per_process_breakdown',
                      'get_causal_chains', 'get_recommendation', 'quote only numbers']) {
    check(text.includes(step), `investigate prompt mentions ${step}`);
  }

  const { resources } = await client.listResources();
  const uris = resources.map((r) => r.uri);
  check(uris[0] === 'ingero://schema', `resources start with the schema: ${uris}`);
  check(uris.includes(`ingero://runs/${run}/explain`), `resources list run ${run}'s explain text: ${uris}`);
  const { resourceTemplates } = await client.listResourceTemplates();
  checkEqual(resourceTemplates.map((t) => t.uriTemplate), ['ingero://runs/{run}/explain'], 'resource templates');

  const schema = (await client.readResource({ uri: 'ingero://schema' })).contents[0];
  check(schema.text.includes('CREATE TABLE IF NOT EXISTS call_stats'), 'the schema resource is schema.sql');
  const explain = (await client.readResource({ uri: `ingero://runs/${run}/explain` })).contents[0];
  check(explain.mimeType === 'text/plain' && explain.text.includes('VERDICT'),
        `run ${run}'s explain resource is the explain text: ${explain.text.slice(0, 200)}`);
}

// Every tool, with the numbers held to `explain --json` of the same run.
async function checkTools(client, { run, other, explain }) {
  const { runs } = await call(client, 'list_runs', {});
  const listed = runs.find((r) => r.run_id === run);
  check(listed, `list_runs has run ${run}`);
  checkEqual(listed.epoch_median_s, explain.metrics.epoch_median_s, 'list_runs epoch median');

  const stats = await call(client, 'get_trace_stats', { run });
  checkEqual(stats.run, explain.run, 'get_trace_stats run header');
  checkEqual(stats.metrics, explain.metrics, 'get_trace_stats metrics');
  checkEqual(stats.calls, explain.call_latency, 'get_trace_stats calls');
  check(typeof stats.losses.recorded === 'boolean', 'get_trace_stats says whether losses were recorded');

  const chains = await call(client, 'get_causal_chains', { run, top_n: 50 });
  checkEqual(chains.chains, explain.causal_chains, 'get_causal_chains chains');
  checkEqual(chains.verdict, explain.metrics.verdict, 'get_causal_chains verdict');
  const high = await call(client, 'get_causal_chains', { run, min_severity: 'HIGH' });
  check(high.chains.every((c) => c.severity === 'HIGH'), 'min_severity HIGH keeps only HIGH chains');

  const profile = await call(client, 'get_profile', { run });
  checkEqual(profile.profile, explain.profile, 'get_profile profile');

  const roles = await call(client, 'get_per_process_breakdown', { run });
  checkEqual(roles.rows, explain.roles, 'get_per_process_breakdown rows by role');
  const processes = await call(client, 'get_per_process_breakdown', { run, by: 'process' });
  check(processes.rows.length >= roles.rows.length, 'by process has at least as many rows as by role');

  const compared = await call(client, 'compare_runs', { run_a: run, run_b: other });
  checkEqual([compared.a.run_id, compared.b.run_id], [run, other], 'compare_runs runs');
  checkEqual(compared.a.window_s, explain.run.window_s, 'compare_runs run a window');

  const recommendation = await call(client, 'get_recommendation', {});
  check(recommendation.headline.length > 0 && recommendation.configs.length > 0, 'get_recommendation has a headline');

  const timeline = await call(client, 'get_timeline', { run, limit: 10 });
  check(timeline.events.length === 10 && timeline.truncated, 'get_timeline stops at its limit and says so');
  const window = await call(client, 'get_timeline', { run, from_s: 1, until_s: 2, categories: ['workload'] });
  check(window.events.every((e) => e.category === 'workload' && e.t_s < 2), 'get_timeline filters by window');

  const count = await call(client, 'run_sql', { query: 'SELECT count(*) AS runs FROM runs' });
  checkEqual(count.columns, ['runs'], 'run_sql columns');
  checkEqual(count.rows, [[runs.length]], 'run_sql counts the runs list_runs lists');
  const capped = await call(client, 'run_sql', { query: 'SELECT ts_ns FROM events', max_rows: 7 });
  check(capped.rows.length === 7 && capped.truncated, 'run_sql caps rows at max_rows');
}

async function checkRefusals(client) {
  await callFails(client, 'get_trace_stats', { run: 999999 }, 'run 999999 is not in');
  await callFails(client, 'run_sql', { query: "INSERT INTO runs(label) VALUES ('x')" }, 'writes');
  await callFails(client, 'run_sql', { query: 'DELETE FROM events' }, 'writes');
  await callFails(client, 'run_sql', { query: 'DROP TABLE events' }, 'changes the schema');
  await callFails(client, 'run_sql', { query: "ATTACH DATABASE '/tmp/ingero-interop-attach.db' AS x" }, 'ATTACH');
  await callFails(client, 'run_sql', { query: 'PRAGMA journal_mode=wal' }, 'PRAGMA journal_mode');
  await callFails(client, 'run_sql', { query: 'SELECT 1; DELETE FROM runs' }, 'more than one statement');
  checkEqual(await client.ping(), {}, 'ping after refusals');
}

async function main() {
  const options = parseArgs(process.argv);
  const timer = setTimeout(() => {
    console.error(`trace_interop: FAIL: no end after ${TIMEOUT_MS / 1000} s`);
    process.exit(1);
  }, TIMEOUT_MS);
  const before = sha256(options.db);

  const { Client, StdioClientTransport } = await loadSdk();
  const transport = new StdioClientTransport({ ...options.server, stderr: 'pipe' });
  let log = '';
  transport.stderr?.on('data', (chunk) => { log += chunk; });
  const client = new Client({ name: 'ingero-bench-trace-interop', version: '1.0.0' });
  const transportErrors = [];
  client.onerror = (error) => transportErrors.push(error.message);
  try {
    await client.connect(transport);
    checkEqual(client.getServerVersion()?.name, 'ingero-bench', 'serverInfo.name');
    check(client.getInstructions()?.includes('list_runs'), 'instructions point at list_runs');
    await checkListings(client, options);
    await checkTools(client, options);
    await checkRefusals(client);
    checkEqual(transportErrors, [], 'transport errors (non-JSON on stdout?)');
  } catch (error) {
    if (log) console.error(`server stderr:\n${log}`);
    throw error;
  } finally {
    await client.close();
  }
  checkEqual(sha256(options.db), before, `sha256 of ${options.db} after the session`);
  clearTimeout(timer);
  console.log(`trace_interop: OK (${checksMade()} checks against ${options.server.command}, ${options.db})`);
}

main().catch((error) => {
  const what = error instanceof Mismatch ? error.message : `unexpected: ${error?.stack ?? error}`;
  console.error(`trace_interop: FAIL: ${what}`);
  process.exit(1);
});
