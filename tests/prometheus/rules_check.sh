#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/prometheus/rules.yml: valid for Prometheus (promtool check rules) and right on series whose
# answers are known (promtool test rules tests/prometheus/rules_test.yml).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
command -v promtool >/dev/null || { echo "SKIP: promtool is missing (scripts/setup --tests installs prometheus)"; exit 0; }
promtool check rules "$repo/docs/prometheus/rules.yml"
promtool test rules "$repo/tests/prometheus/rules_test.yml"
