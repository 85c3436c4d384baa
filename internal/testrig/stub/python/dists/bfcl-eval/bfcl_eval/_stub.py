# The Go stub bfcl holds the category table and the dataset; read them once.
import json
import os
import subprocess

_data = None


def export():
    global _data
    if _data is None:
        out = subprocess.check_output(["bfcl"], env=dict(os.environ, WLC_STUB_BFCL_EXPORT="1"))
        _data = json.loads(out)
    return _data
