// SPDX-License-Identifier: Apache-2.0
// Headless Chromium for the page checks (check_report.mjs, check_trace_json.mjs): one place for the
// binary, its flags, a fresh profile, and a page that may load nothing but local files.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
// No network here, and none wanted: nothing that would make Chromium reach out on its own.
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

// Runs use(page, failures) with a fresh browser and profile (Playwright puts the profile under the
// temporary folder, made here and removed afterwards, so nothing of an earlier run, or of a person's
// own Chromium, is reused). Console errors, script errors and any request outside file: and data:
// URLs are added to failures; such requests are aborted.
export async function withLocalPage(viewport, use) {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ingero-page-check-'));
  process.env.TMPDIR = scratch;
  const failures = [];
  let browser;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
    const page = await browser.newPage({ viewport, deviceScaleFactor: 1 });
    page.on('console', (m) => { if (m.type() === 'error') failures.push(`page: console error: ${m.text()}`); });
    page.on('pageerror', (e) => failures.push(`page: script error: ${e.message}`));
    page.on('requestfailed', (r) => failures.push(`page: failed request ${r.url()} (${r.failure()?.errorText ?? '?'})`));
    page.on('request', (r) => {
      const url = r.url();
      if (!url.startsWith('file:') && !url.startsWith('data:')) failures.push(`page: request outside the file: ${url}`);
    });
    await page.route((url) => url.protocol !== 'file:' && url.protocol !== 'data:', (route) => route.abort());
    await use(page, failures);
  } finally {
    if (browser) await browser.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return failures;
}
