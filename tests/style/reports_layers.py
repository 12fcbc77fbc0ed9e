#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""reports/ is a folder per layer, each including only the layers before it:
data -> analysis -> text -> documents -> render. Exits 1 naming each include that reaches a
later layer, 0 when none does.

    reports_layers.py SOURCE_DIR
"""
import pathlib
import re
import sys

LAYERS = ["data", "analysis", "text", "documents", "render"]
INCLUDE = re.compile(r'^#include "reports/(\w+)/', re.M)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    reports = pathlib.Path(sys.argv[1]) / "reports"
    found, read = [], 0
    for layer in LAYERS:
        for path in sorted((reports / layer).rglob("*")):
            if path.suffix not in (".h", ".cc"):
                continue
            read += 1
            text = path.read_text(errors="replace")
            for match in INCLUDE.finditer(text):
                target = match.group(1)
                if target in LAYERS and LAYERS.index(target) > LAYERS.index(layer):
                    line = text.count("\n", 0, match.start()) + 1
                    found.append(f"{path.relative_to(reports.parent)}:{line}: {layer}/ includes {target}/, a later layer")
    if read == 0:
        print(f"no file under {reports}/{{{','.join(LAYERS)}}}: wrong folder?")
        return 1
    for line in found:
        print(line)
    print(f"{len(found)} include(s) against the layers" if found else f"{read} files keep to the layers")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
