#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every C++ `enum class` of the project names its enumerators in lower_case (Mode::loader,
OutputTarget::in_place), one style for all; constants keep kName. Exits 1 naming each
enumerator that does not, 0 when all do. bpf/ is C, with its IB_ names, and is left out.

    enumerator_style.py SOURCE_DIR
"""
import pathlib
import re
import sys

ENUM = re.compile(r"\benum\s+class\s+(\w+)\s*(?::\s*[\w:]+\s*)?\{(.*?)\}", re.S)
NAME = re.compile(r"^[a-z][a-z0-9_]*$")
FOLDERS = ("common", "tracer", "harness", "reports", "mcp", "workloads", "bench", "tests")


def enumerators(body):
    body = re.sub(r"//[^\n]*|/\*.*?\*/", "", body, flags=re.S)
    for item in body.split(","):
        name = item.split("=")[0].strip()
        if name:
            yield name


def offenders(root):
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".h", ".cc") or not path.is_file():
                continue
            text = path.read_text(errors="replace")
            for match in ENUM.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                for name in enumerators(match.group(2)):
                    if not NAME.match(name):
                        yield f"{path.relative_to(root)}:{line}: {match.group(1)}::{name} is not lower_case"


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1])
    found = list(offenders(root))
    for line in found:
        print(line)
    seen = sum(1 for folder in FOLDERS for p in (root / folder).rglob("*.h") if "enum class" in p.read_text(errors="replace"))
    if seen == 0:
        print(f"no enum class found under {root}: wrong folder?")
        return 1
    print(f"{len(found)} enumerator(s) not in lower_case" if found else "every enum class names its enumerators in lower_case")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
