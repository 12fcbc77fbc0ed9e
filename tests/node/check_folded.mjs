#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Loads a folded-stacks file (`ingero-bench export --format folded`) into speedscope, the npm package's
// own build, in headless Chromium: its import reads the file as a user's drop would, and its own export
// (the speedscope JSON it saves) gives back what it understood. Checks that the samples it holds add
// up to the count expected (the DB's) and that every frame name expected is among its frames.
//
// usage: node check_folded.mjs FILE.folded --expect-total N [--expect-frame NAME ...]
// exit:  0 all checks passed, 1 a check failed (each failure printed), 2 bad usage
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

import { withLocalPage } from './chromium.mjs';

const USAGE = 'usage: node check_folded.mjs FILE.folded --expect-total N [--expect-frame NAME ...]';

function parseArgs(argv) {
  const options = { frames: [], total: null, file: null };
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    if (arg === '--expect-total' || arg === '--expect-frame') {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${arg} needs a value`);
      if (arg === '--expect-frame') options.frames.push(value);
      else if (/^\d+$/.test(value)) options.total = Number(value);
      else throw new Error(`--expect-total takes a whole number, not "${value}"`);
    } else if (options.file === null) {
      options.file = arg;
    } else {
      throw new Error(`unexpected argument ${arg}`);
    }
  }
  if (options.file === null || options.total === null) throw new Error('FILE and --expect-total are both needed');
  if (!fs.existsSync(options.file)) throw new Error(`no such file: ${options.file}`);
  return options;
}

// speedscope's page, from the installed package (its "main" is not a module to import: the package is
// the web application, built).
function speedscopePage() {
  const require = createRequire(import.meta.url);
  const root = path.dirname(require.resolve('speedscope/package.json'));
  const page = path.join(root, 'dist', 'release', 'index.html');
  if (!fs.existsSync(page)) throw new Error(`speedscope's build is missing: ${page} (run: npm ci in tests/node)`);
  return pathToFileURL(page).href;
}

// Samples in a speedscope file: the sum of every profile's weights.
function totalOf(exported) {
  let total = 0;
  for (const p of exported.profiles ?? []) {
    if (p.type === 'sampled') total += (p.weights ?? []).reduce((a, w) => a + w, 0);
    else if (p.type === 'evented') total += p.endValue - p.startValue;
  }
  return total;
}

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`check_folded: ${e.message}\n${USAGE}`);
    return 2;
  }
  const failures = [];
  let exported = null;
  const pageFailures = await withLocalPage({ width: 1280, height: 800 }, async (page) => {
    await page.goto(speedscopePage());
    await page.locator('input[type=file]').setInputFiles(options.file);
    const exportButton = page.getByText('Export', { exact: false }).first();
    await exportButton.waitFor({ timeout: 30000 });
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 30000 }), exportButton.click()]);
    exported = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
  });
  // speedscope draws with WebGL, which a headless Chromium without a GPU may refuse: not a file problem.
  failures.push(...pageFailures.filter((f) => !/WebGL/i.test(f)));
  if (!exported) {
    failures.push('speedscope exported nothing: the file was not imported');
  } else {
    const total = totalOf(exported);
    if (total !== options.total) failures.push(`speedscope holds ${total} samples, expected ${options.total}`);
    const names = new Set((exported.shared?.frames ?? []).map((f) => f.name));
    for (const name of options.frames)
      if (!names.has(name)) failures.push(`no frame named "${name}" among speedscope's ${names.size} frames`);
    console.log(`check_folded: speedscope imported ${options.file}: ${total} samples, ${names.size} frames`);
  }
  for (const f of failures) console.error(`check_folded FAILED: ${f}`);
  return failures.length ? 1 : 0;
}

process.exit(await main());
