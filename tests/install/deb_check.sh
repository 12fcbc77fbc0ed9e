#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cpack -G DEB builds the package; its declared dependencies and contents are checked, and the
# programs it holds, extracted into a temporary root (dpkg-deb -x), print their version, run a tiny
# CPU workload untraced and explain that run's DB.
# Usage: deb_check.sh BUILD_DIR
set -euo pipefail
build=$(realpath "${1:?usage: deb_check.sh BUILD_DIR}")
work=$(mktemp -d /tmp/ingero-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "deb: $*" >&2; exit 1; }
command -v dpkg-deb >/dev/null || { echo "dpkg-deb is missing: the package is not checked"; exit 0; }

# cpack -B writes only there: the build's install_manifest.txt (a real install's list) is as it was.
manifest_state() { [[ -f $build/install_manifest.txt ]] && md5sum <"$build/install_manifest.txt" || echo none; }
manifest_before=$(manifest_state)
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log" >&2; fail "cpack -G DEB failed"; }
[[ $(manifest_state) == "$manifest_before" ]] || fail "cpack -B changed $build/install_manifest.txt"
deb=$(ls "$work"/out/ingero-bench_*.deb 2>/dev/null | head -1)
[[ -n $deb ]] || { cat "$work/cpack.log" >&2; fail "cpack wrote no ingero-bench_*.deb"; }

# Declared dependencies: the Debian 12 packages of what the programs link, and python3.
depends=$(dpkg-deb -f "$deb" Depends)
want=(libbpf1 libelf1 libsqlite3-0 libfmt9 libturbojpeg0 libstdc++6 python3
      libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 libprometheus-cpp-push1.0)
# Debian's LibTorch is a package (libtorch1.13); one from pip or a tarball is not.
if ldd "$build/ingero-bench-workload" | grep -q '=> /\(usr/\)\?lib/.*libtorch_cpu'; then
  want+=("libtorch$(ldd "$build/ingero-bench-workload" | sed -n 's/.*libtorch_cpu\.so\.\([0-9.]*\) =>.*/\1/p')")
fi
declared=$(sed 's/ *([^)]*)//g; s/, */\n/g' <<<"$depends")  # one package name a line, versions dropped
for package in "${want[@]}"; do
  grep -qxF "$package" <<<"$declared" || fail "Depends lacks $package: $depends"
done
[[ $(dpkg-deb -f "$deb" Package) == ingero-bench ]] || fail "the package is not named ingero-bench"
version=$(dpkg-deb -f "$deb" Version)

# Contents: both programs in /usr/bin, the Python sources and the docs.
dpkg-deb -c "$deb" >"$work/contents.txt"
for f in ./usr/bin/ingero-bench ./usr/bin/ingero-bench-workload ./usr/share/ingero-bench/python/python_reference.py \
         ./usr/share/ingero-bench/python/ingero_observer.py ./usr/share/doc/ingero-bench/README.md \
         ./usr/share/doc/ingero-bench/LICENSES/Apache-2.0.txt ./usr/share/doc/ingero-bench/copyright; do
  grep -q " $f\$" "$work/contents.txt" || fail "$f is not in the package"
done

# The extracted programs, away from the build folder.
root="$work/root"
dpkg-deb -x "$deb" "$root"
# Debian's machine-readable copyright format, naming each licence the package's files are under.
copyright="$root/usr/share/doc/ingero-bench/copyright"
head -1 "$copyright" | grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
  fail "$copyright is not in Debian's copyright format"
for licence in Apache-2.0 GPL-2.0-only; do
  grep -q "^License: $licence\$" "$copyright" || fail "$copyright does not give the $licence text"
done
cd "$work"
printed=$("$root/usr/bin/ingero-bench" --version)
[[ $printed == "ingero-bench $version" ]] || fail "--version says '$printed', the package $version"
"$root/usr/bin/ingero-bench" --workload dataloader --mode direct --device cpu --samples 4096 --batch-size 512 \
  --features 8 --hidden 8 --epochs 1 --no-trace --db "$work/runs.db" --out "$work/runs" >"$work/run.txt" 2>&1 ||
  { cat "$work/run.txt" >&2; fail "the packaged ingero-bench could not run a workload"; }
"$root/usr/bin/ingero-bench" explain --db "$work/runs.db" >"$work/explain.txt" 2>&1 ||
  { cat "$work/explain.txt" >&2; fail "explain failed on the packaged program's DB"; }
grep -q "direct" "$work/explain.txt" || { cat "$work/explain.txt" >&2; fail "explain does not name the run"; }
echo "$(basename "$deb"): Depends: $depends; ran and explained from $root"
