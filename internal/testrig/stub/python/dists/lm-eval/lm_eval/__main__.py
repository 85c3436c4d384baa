# `python3 -m lm_eval ...` runs the Go stub (internal/testrig/stub/lm_eval), which
# parses lm-eval's command line.
import os
import shutil
import sys

exe = shutil.which("lm_eval")
if exe is None:
    sys.exit("stub lm_eval: the Go stub lm_eval is not on PATH")
os.execv(exe, ["lm_eval"] + sys.argv[1:])
