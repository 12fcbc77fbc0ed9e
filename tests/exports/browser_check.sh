#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Opens what `report` and `export --format perfetto` write in headless Chromium (tests/node):
#   report:   the HTML report of the fixture's sweep 1 and of the H200 DB; every chart drawn
#             (check_report.mjs), the expected charts present
#   perfetto: the trace of the fixture's run and of the H200 DB's run 7, parsed by the page's
#             JSON.parse, traceEvents as long as the file says (check_trace_json.mjs)
#   folded:   the profiled job's folded stacks, all and per role, loaded into speedscope: the samples it
#             holds add up to the DB's (check_folded.mjs)
# The report check also draws the profiled job's report: a flame graph per role.
# Usage: browser_check.sh report|perfetto|folded EXPORTS_TOOL FIXTURE_DB_TOOL NODE_DIR H200_DB OUT_DIR
set -uo pipefail
if [ $# -ne 6 ]; then
  echo "usage: $0 report|perfetto|folded EXPORTS_TOOL FIXTURE_DB_TOOL NODE_DIR H200_DB OUT_DIR" >&2
  exit 2
fi
what=$1 tool=$2 fixture_db=$3 node_dir=$4 h200=$5 out=$6
source "$node_dir/require_browser.sh" || exit 1
require_browser "$node_dir" "exports_${what}_browser_check" || exit 1

mkdir -p "$out" || exit 1
"$fixture_db" "$out/sweeps.db" "$out/perfetto.db" "$out/profile.db" || { echo "exports_fixture_db failed" >&2; exit 1; }
status=0
case $what in
  report)
    "$tool" report --db "$out/sweeps.db" --sweep 1 --format html --out "$out/sweep-report.html" || exit 1
    "$tool" report --db "$h200" --format html --out "$out/h200-report.html" || exit 1
    # Sweep 1: one grid holds every configuration, so the only interval bars are the speed-ups.
    node "$node_dir/check_report.mjs" "$out/sweep-report.html" "$out/sweep-report.png" \
      --expect heat-map=1 --expect interval-bars=1 --expect bar-panel=2 --expect timeline=1 || status=1
    node "$node_dir/check_report.mjs" "$out/h200-report.html" "$out/h200-report.png" \
      --expect heat-map=1 --expect interval-bars=2 --expect bar-panel=2 --expect timeline=1 || status=1
    "$tool" report --db "$out/profile.db" --run 1 --format html --out "$out/profile-report.html" || exit 1
    node "$node_dir/check_report.mjs" "$out/profile-report.html" "$out/profile-report.png" \
      --expect flame-graph=2 --expect timeline=1 || status=1
    ;;
  folded)
    # The fixture's profile (export_fixtures.h, add_profiled_job): main 100 samples, workers 100.
    "$tool" export --format folded --db "$out/profile.db" --out "$out/profile.folded" || exit 1
    "$tool" export --format folded --db "$out/profile.db" --run 1 --role main --out "$out/profile-main.folded" || exit 1
    node "$node_dir/check_folded.mjs" "$out/profile.folded" --expect-total 200 \
      --expect-frame "decode_mcu [libjpeg.so.62.3.0]" --expect-frame "<module>" || status=1
    node "$node_dir/check_folded.mjs" "$out/profile-main.folded" --expect-total 100 \
      --expect-frame "at::native::_convolution [libtorch_cpu.so]" || status=1
    ;;
  perfetto)
    "$tool" export --db "$out/perfetto.db" --run 1 --out "$out/perfetto-fixture.json" || exit 1
    "$tool" export --db "$h200" --run 7 --out "$out/h200-run7.json" || exit 1
    node "$node_dir/check_trace_json.mjs" "$out/perfetto-fixture.json" --min-events 18 || status=1
    node "$node_dir/check_trace_json.mjs" "$out/h200-run7.json" --min-events 1387 || status=1
    ;;
  *)
    echo "unknown check '$what': report, perfetto or folded" >&2
    exit 2
    ;;
esac
exit $status
