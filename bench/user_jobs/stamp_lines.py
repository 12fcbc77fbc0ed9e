# SPDX-License-Identifier: Apache-2.0
"""Copies standard input to standard output, each line prefixed with CLOCK_MONOTONIC nanoseconds
(the trace's clock), so a job's own meter lines can be matched to the part of the job a trace saw."""
import sys
import time

for line in sys.stdin:
    sys.stdout.write("%d %s" % (time.monotonic_ns(), line))
    sys.stdout.flush()
