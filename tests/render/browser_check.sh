#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes the demo report and checks it in headless Chromium (tests/node/check_report.mjs).
# Usage: browser_check.sh RENDER_DEMO NODE_DIR OUT_DIR
set -uo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 RENDER_DEMO NODE_DIR OUT_DIR" >&2
  exit 2
fi
demo=$1 node_dir=$2 out=$3

source "$node_dir/require_browser.sh" || exit 1
require_browser "$node_dir" render_browser_check || exit 1

mkdir -p "$out" || exit 1
"$demo" "$out/render_demo.html" "$out/render_edge_cases.html" || { echo "render_demo failed" >&2; exit 1; }
status=0
node "$node_dir/check_report.mjs" "$out/render_demo.html" "$out/render_demo.png" \
  --expect heat-map=1 --expect interval-bars=1 --expect bar-panel=1 --expect timeline=1 --expect flame-graph=1 || status=1
# Empty charts draw little more than their background, hence --min-shapes 1.
node "$node_dir/check_report.mjs" "$out/render_edge_cases.html" "$out/render_edge_cases.png" --min-shapes 1 \
  --expect heat-map=2 --expect interval-bars=2 --expect bar-panel=2 --expect timeline=2 --expect flame-graph=1 || status=1
exit $status
