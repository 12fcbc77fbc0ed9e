#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Opens an HTML report in headless Chromium and checks that it stands alone and that every chart
// (svg[data-chart]) is really drawn: placed on the page, made of shapes, not blank, text not
// overlapping. Saves a full-page screenshot for a person to look at.
//
// usage: node check_report.mjs REPORT.html SCREENSHOT.png [--expect kind=count ...] [--min-shapes N]
// exit:  0 all checks passed, 1 a check failed (each failure printed), 2 bad usage
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { PNG } from 'pngjs';

import { withLocalPage } from './chromium.mjs';

const USAGE = 'usage: node check_report.mjs REPORT.html SCREENSHOT.png [--expect kind=count ...] [--min-shapes N]';
const SHAPES = 'rect, line, circle, ellipse, path, polygon, polyline';
// A chart is blank when almost all of its pixels are its background colour.
const MIN_INK_SHARE = 0.01;
const MIN_INK_PIXELS = 200;
const MIN_COLOURS = 3;

class UsageError extends Error {}

function parseArgs(argv) {
  const options = { expect: new Map(), minShapes: 5, positional: [] };
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    if (arg === '--expect' || arg === '--min-shapes') {
      const value = argv[++i];
      if (value === undefined) throw new UsageError(`${arg} needs a value`);
      if (arg === '--min-shapes') {
        if (!/^\d+$/.test(value)) throw new UsageError(`--min-shapes takes a whole number, not "${value}"`);
        options.minShapes = Number(value);
        continue;
      }
      const match = /^([A-Za-z0-9_-]+)=(\d+)$/.exec(value);
      if (!match) throw new UsageError(`--expect takes kind=count, not "${value}"`);
      options.expect.set(match[1], Number(match[2]));
    } else if (arg.startsWith('--')) {
      throw new UsageError(`unknown option ${arg}`);
    } else {
      options.positional.push(arg);
    }
  }
  if (options.positional.length !== 2) throw new UsageError('REPORT.html and SCREENSHOT.png are both needed');
  [options.report, options.screenshot] = options.positional;
  if (!fs.existsSync(options.report)) throw new UsageError(`no such report: ${options.report}`);
  return options;
}

// Everything the page measures about its charts, in one pass inside the browser.
function measureCharts(shapeSelector) {
  const page = {
    width: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight,
  };
  const charts = [...document.querySelectorAll('svg[data-chart]')].map((svg, index) => {
    const box = svg.getBoundingClientRect();
    const title = svg.querySelector(':scope > title')?.textContent ?? '';
    const texts = [...svg.querySelectorAll('text')]
      .map((t) => ({ text: t.textContent.trim(), box: t.getBoundingClientRect() }))
      .filter((t) => t.text !== '' && t.box.width > 0 && t.box.height > 0);
    const overlaps = [];
    const outside = [];
    for (let i = 0; i < texts.length; ++i) {
      const a = texts[i].box;
      if (a.left < box.left - 0.5 || a.right > box.right + 0.5 || a.top < box.top - 0.5 || a.bottom > box.bottom + 0.5) {
        outside.push(texts[i].text);
      }
      for (let j = i + 1; j < texts.length; ++j) {
        const b = texts[j].box;
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        // Glyph boxes include the line's ascent and descent; a couple of pixels is not a collision.
        if (w > 2 && h > 3) overlaps.push(`"${texts[i].text}" / "${texts[j].text}"`);
      }
    }
    return {
      index,
      kind: svg.getAttribute('data-chart'),
      title,
      role: svg.getAttribute('role'),
      box: { x: box.left + window.scrollX, y: box.top + window.scrollY, width: box.width, height: box.height },
      shapes: svg.querySelectorAll(shapeSelector).length,
      overlaps,
      outside,
    };
  });
  return { page, charts };
}

// Share of pixels that differ from the most common colour, and how many colours there are.
function inkOf(pngBuffer) {
  const png = PNG.sync.read(pngBuffer);
  const counts = new Map();
  for (let i = 0; i < png.data.length; i += 4) {
    const key = (png.data[i] << 16) | (png.data[i + 1] << 8) | png.data[i + 2];
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  let background = 0;
  for (const n of counts.values()) background = Math.max(background, n);
  const pixels = png.width * png.height;
  return { pixels, ink: pixels - background, colours: counts.size };
}

function checkChart(chart, page, minShapes, image) {
  const problems = [];
  const { x, y, width, height } = chart.box;
  if (!(width > 0 && height > 0)) problems.push(`empty bounding box ${width}×${height}`);
  if (x < -0.5 || y < -0.5 || x + width > page.width + 0.5 || y + height > page.height + 0.5) {
    problems.push(`box (${x}, ${y}, ${width}×${height}) is not inside the page (${page.width}×${page.height})`);
  }
  if (chart.role !== 'img' || chart.title === '') problems.push('no role="img" with a <title>');
  if (chart.shapes < minShapes) problems.push(`${chart.shapes} shapes, expected at least ${minShapes}`);
  if (chart.overlaps.length > 0) {
    problems.push(`${chart.overlaps.length} overlapping labels: ${chart.overlaps.slice(0, 5).join(', ')}`);
  }
  if (chart.outside.length > 0) problems.push(`labels outside the chart: ${chart.outside.slice(0, 5).join(', ')}`);
  if (image) {
    const need = Math.max(MIN_INK_PIXELS, Math.round(image.pixels * MIN_INK_SHARE));
    if (image.ink < need) problems.push(`looks blank: ${image.ink} drawn pixels, expected at least ${need}`);
    if (image.colours < MIN_COLOURS) problems.push(`${image.colours} colours, expected at least ${MIN_COLOURS}`);
  }
  return problems;
}

function checkCounts(charts, expect) {
  const problems = [];
  const found = new Map();
  for (const c of charts) found.set(c.kind, (found.get(c.kind) ?? 0) + 1);
  for (const [kind, want] of expect) {
    const got = found.get(kind) ?? 0;
    if (got !== want) problems.push(`expected ${want} chart(s) of kind "${kind}", found ${got}`);
  }
  return problems;
}

async function run(options) {
  return withLocalPage({ width: 1280, height: 900 }, async (page, failures) => {
    await page.goto(pathToFileURL(path.resolve(options.report)).href, { waitUntil: 'load' });

    const { page: size, charts } = await page.evaluate(measureCharts, SHAPES);
    if (charts.length === 0) failures.push('page: no svg[data-chart] found');
    const locators = page.locator('svg[data-chart]');
    for (const chart of charts) {
      const shot = await locators.nth(chart.index).screenshot();
      const image = inkOf(shot);
      const name = `chart ${chart.index + 1} (${chart.kind}, "${chart.title}")`;
      for (const p of checkChart(chart, size, options.minShapes, image)) failures.push(`${name}: ${p}`);
      console.log(`${name}: ${Math.round(chart.box.width)}×${Math.round(chart.box.height)} px, ${chart.shapes} shapes, ` +
                  `${image.colours} colours, ${(100 * image.ink / image.pixels).toFixed(1)} % drawn`);
    }
    failures.push(...checkCounts(charts, options.expect).map((p) => `page: ${p}`));
    await page.screenshot({ path: options.screenshot, fullPage: true });
    console.log(`screenshot: ${path.resolve(options.screenshot)}`);
  });
}

let options;
try {
  options = parseArgs(process.argv.slice(2));
} catch (e) {
  if (!(e instanceof UsageError)) throw e;
  console.error(`check_report: ${e.message}\n${USAGE}`);
  process.exit(2);
}
try {
  const failures = await run(options);
  if (failures.length > 0) {
    for (const f of failures) console.error(`FAIL ${f}`);
    console.error(`check_report: ${failures.length} check(s) failed for ${options.report}`);
    process.exit(1);
  }
  console.log(`check_report: all charts drawn in ${options.report}`);
} catch (e) {
  console.error(`check_report: could not check ${options.report}: ${e.message}`);
  process.exit(1);
}
