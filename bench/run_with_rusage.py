#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# run_with_rusage.py CMD [ARGS...]: runs CMD, then prints to stderr one line
#   RUSAGE elapsed_s user_s sys_s voluntary_switches involuntary_switches
# from the child's own rusage (getrusage(RUSAGE_CHILDREN) around it), and exits with its status.
# For the benchmarks' CPU and context-switch figures; GNU time is not installed everywhere.
import resource
import subprocess
import sys
import time

before = resource.getrusage(resource.RUSAGE_CHILDREN)
start = time.monotonic()
rc = subprocess.call(sys.argv[1:])
elapsed = time.monotonic() - start
after = resource.getrusage(resource.RUSAGE_CHILDREN)
print("RUSAGE %.3f %.3f %.3f %d %d" % (elapsed, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime,
                                       after.ru_nvcsw - before.ru_nvcsw, after.ru_nivcsw - before.ru_nivcsw), file=sys.stderr)
sys.exit(rc)
