# SPDX-License-Identifier: Apache-2.0
# Sourced by the browser checks: require_browser NODE_DIR CHECK_NAME fails (returns 1), naming what to
# install, when node, NODE_DIR/node_modules or /usr/bin/chromium is missing. A missing tool is a
# failure, not a skip: the check would otherwise pass without having looked.
require_browser() {
  local node_dir=$1 name=$2
  local missing=()
  command -v node >/dev/null 2>&1 || missing+=("node (Node.js 18 or newer; Debian: apt-get install nodejs npm)")
  if [ ! -d "$node_dir/node_modules/playwright-core" ] || [ ! -d "$node_dir/node_modules/pngjs" ] ||
     [ ! -d "$node_dir/node_modules/speedscope" ]; then
    missing+=("$node_dir/node_modules (run: cd $node_dir && npm ci)")
  fi
  [ -x /usr/bin/chromium ] || missing+=("/usr/bin/chromium (Debian: apt-get install chromium)")
  if [ ${#missing[@]} -gt 0 ]; then
    echo "$name FAILED: cannot run the browser check; install:" >&2
    for m in "${missing[@]}"; do echo "  - $m" >&2; done
    return 1
  fi
}
