# SPDX-License-Identifier: Apache-2.0
"""A job that never imports torch: python3 no_torch_job.py FACTS. Prints a computation, writes
what it saw of sitecustomize to FACTS, and exits with status 3."""
import json
import sys

print("squares", sum(i * i for i in range(1000)))
site = sys.modules.get("sitecustomize")
chained = getattr(site, "ingero_chained", None)
facts = {
    "torch_loaded": "torch" in sys.modules,
    "observer_loaded": "ingero_observer" in sys.modules,
    "sitecustomize_file": getattr(site, "__file__", None),
    "chained_file": getattr(chained, "__file__", None),
    "user_value": getattr(site, "USER_VALUE", None),
}
with open(sys.argv[1], "w") as f:
    json.dump(facts, f)
print("torch loaded:", "torch" in sys.modules)
sys.exit(3)
