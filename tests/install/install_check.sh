#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cmake --install into a fresh prefix, then the installed ingero-bench runs a workload from there:
# it finds its workload program beside itself, and the Python reference it carries runs too.
# Usage: install_check.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: install_check.sh BUILD_DIR}
prefix=$(mktemp -d /tmp/ingero-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/ingero-bench bin/ingero-bench-workload share/ingero-bench/python/python_reference.py \
         share/ingero-bench/python/ingero_observer.py share/doc/ingero-bench/README.md \
         share/doc/ingero-bench/formats.md share/doc/ingero-bench/LICENSES/Apache-2.0.txt; do
  [[ -e $prefix/$f ]] || { echo "install: $f is missing from $prefix" >&2; exit 1; }
done
# Run from another folder, with the build folder out of reach of the path.
cd "$prefix"
modes=direct
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then modes=direct,python; else echo "python3 cannot import torch: the python mode is not run"; fi
"$prefix/bin/ingero-bench" --workload dataloader --mode "$modes" --device cpu --samples 4096 --batch-size 512 \
  --features 8 --hidden 8 --epochs 1 --no-trace --db "$prefix/runs.db" >"$prefix/out.txt" 2>&1 ||
  { cat "$prefix/out.txt" >&2; exit 1; }
count=$(sqlite3 "$prefix/runs.db" "SELECT count(*) FROM runs WHERE status = 'ok'")
want=$(tr ',' '\n' <<<"$modes" | wc -l)
[[ $count == "$want" ]] || { echo "install: $count of $want runs ok" >&2; cat "$prefix/out.txt" >&2; exit 1; }
echo "installed in $prefix: $count runs ok ($modes)"
