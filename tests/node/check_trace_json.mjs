#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Opens a Chrome trace-event JSON file (ingero-bench export --format perfetto) in headless Chromium and
// parses it there with the browser's own JSON.parse, as chrome://tracing and ui.perfetto.dev do: the
// text must parse, traceEvents must hold as many events as Node's parse and the file's metadata count,
// and every event must have the fields its phase needs.
//
// usage: node check_trace_json.mjs TRACE.json [--min-events N]
// exit:  0 all checks passed, 1 a check failed (each failure printed), 2 bad usage
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { withLocalPage } from './chromium.mjs';

const USAGE = 'usage: node check_trace_json.mjs TRACE.json [--min-events N]';

class UsageError extends Error {}

function parseArgs(argv) {
  const options = { minEvents: 1, positional: [] };
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--min-events') {
      const value = argv[++i];
      if (!/^\d+$/.test(value ?? '')) throw new UsageError('--min-events takes a whole number');
      options.minEvents = Number(value);
    } else if (argv[i].startsWith('--')) {
      throw new UsageError(`unknown option ${argv[i]}`);
    } else {
      options.positional.push(argv[i]);
    }
  }
  if (options.positional.length !== 1) throw new UsageError('one TRACE.json is needed');
  [options.trace] = options.positional;
  if (!fs.existsSync(options.trace)) throw new UsageError(`no such file: ${options.trace}`);
  return options;
}

// Runs inside the page: the file is shown as text; parse it and check every event's shape.
function parseInPage() {
  const text = (document.querySelector('pre') ?? document.body).textContent;
  const problems = [];
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { length: -1, problems: [`JSON.parse failed: ${e.message}`] };
  }
  if (!Array.isArray(doc.traceEvents)) return { length: -1, problems: ['traceEvents is not an array'] };
  const phases = {};
  const named = new Set();
  for (const e of doc.traceEvents) {
    phases[e.ph] = (phases[e.ph] ?? 0) + 1;
    if (e.ph === 'M' && e.name === 'thread_name') named.add(`${e.pid}/${e.tid}`);
  }
  for (const e of doc.traceEvents) {
    const where = JSON.stringify(e).slice(0, 160);
    if (!Number.isInteger(e.pid) || !Number.isInteger(e.tid)) problems.push(`pid/tid not integers: ${where}`);
    if (typeof e.name !== 'string' || e.name === '') problems.push(`no name: ${where}`);
    if (e.ph === 'M') continue;
    if (typeof e.ts !== 'number' || !Number.isFinite(e.ts)) problems.push(`ts not a number: ${where}`);
    if (e.ph === 'X' && !(typeof e.dur === 'number' && e.dur >= 0)) problems.push(`X without dur >= 0: ${where}`);
    if ((e.ph === 'X' || e.ph === 'i') && !named.has(`${e.pid}/${e.tid}`)) problems.push(`thread without thread_name: ${where}`);
    if (e.ph === 'C' && (typeof e.args !== 'object' || Object.values(e.args).some((v) => typeof v !== 'number')))
      problems.push(`counter without numeric args: ${where}`);
  }
  return { length: doc.traceEvents.length, phases, metadata: doc.metadata ?? null, problems: problems.slice(0, 10) };
}

async function run(options) {
  const expected = JSON.parse(fs.readFileSync(options.trace, 'utf8'));
  return withLocalPage({ width: 800, height: 600 }, async (page, failures) => {
    await page.goto(pathToFileURL(path.resolve(options.trace)).href, { waitUntil: 'load' });
    const result = await page.evaluate(parseInPage);
    failures.push(...result.problems.map((p) => `page: ${p}`));
    if (result.length < 0) return;
    if (result.length !== expected.traceEvents.length)
      failures.push(`page: traceEvents has ${result.length} events, Node parsed ${expected.traceEvents.length}`);
    if (result.length < options.minEvents) failures.push(`page: ${result.length} events, expected at least ${options.minEvents}`);
    const counted = result.metadata?.trace_events;
    if (counted) {
      const sum = Object.values(counted).reduce((a, b) => a + b, 0);
      if (sum !== result.length) failures.push(`page: metadata counts ${sum} events, traceEvents holds ${result.length}`);
    }
    console.log(`${options.trace}: ${result.length} trace events parsed in Chromium (${JSON.stringify(result.phases)})`);
  });
}

let options;
try {
  options = parseArgs(process.argv.slice(2));
} catch (e) {
  if (!(e instanceof UsageError)) throw e;
  console.error(`check_trace_json: ${e.message}\n${USAGE}`);
  process.exit(2);
}
try {
  const failures = await run(options);
  if (failures.length > 0) {
    for (const f of failures) console.error(`FAIL ${f}`);
    console.error(`check_trace_json: ${failures.length} check(s) failed for ${options.trace}`);
    process.exit(1);
  }
  console.log(`check_trace_json: ${options.trace} parses in Chromium`);
} catch (e) {
  console.error(`check_trace_json: could not check ${options.trace}: ${e.message}`);
  process.exit(1);
}
