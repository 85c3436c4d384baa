# A fake pip for wlc's tests (see ../README.md).
import datetime
import json
import os
import re
import shutil
import sys
from pathlib import Path

DISTS = Path(__file__).resolve().parent.parent / "dists"


def record(argv, flags):
    log = os.environ.get("WLC_STUB_LOG")
    if not log:
        return
    os.makedirs(log, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    rec = {"program": "pip", "mode": argv[0] if argv else "", "pid": os.getpid(), "argv": argv,
           "env": dict(os.environ), "dir": os.getcwd(), "flags": flags, "time": now.isoformat()}
    name = "pip-%d-%d.json" % (os.getpid(), int(now.timestamp() * 1e9))
    with open(os.path.join(log, "." + name), "w") as f:
        json.dump(rec, f)
    os.replace(os.path.join(log, "." + name), os.path.join(log, name))


def main(argv):
    if argv[:1] == ["--version"]:
        print("pip 24.0 (wlc stub)")
        return 0
    if argv[:1] != ["install"]:
        sys.stderr.write("ERROR: the stub pip only installs\n")
        return 2
    reqs = [a for a in argv[1:] if not a.startswith("-")]
    unknown = [a for a in argv[1:] if a.startswith("-") and a not in ("--quiet", "-q", "--user", "--upgrade", "-U")]
    if unknown:
        sys.stderr.write("ERROR: no such option: %s\n" % unknown[0])
        return 2
    site = os.environ.get("WLC_STUB_PIP_SITE")
    flags = {"site": site or ""}
    record(argv, flags)
    if not site:
        sys.stderr.write("ERROR: WLC_STUB_PIP_SITE is not set\n")
        return 1
    fails = int(os.environ.get("WLC_STUB_PIP_FAILS", "0") or 0)
    counter = Path(site) / ".stub-pip-calls"
    Path(site).mkdir(parents=True, exist_ok=True)
    calls = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(calls + 1))
    if calls < fails:
        sys.stderr.write("ERROR: Could not install packages due to an OSError: HTTPSConnectionPool(host='pypi.org', port=443): Read timed out.\n")
        return 1
    for req in reqs:
        name = re.split(r"[\[<>=!~; ]", req, maxsplit=1)[0].lower().replace("_", "-")
        src = DISTS / name
        if not src.is_dir():
            sys.stderr.write("ERROR: Could not find a version that satisfies the requirement %s (from versions: none)\n" % req)
            return 1
    for req in reqs:
        name = re.split(r"[\[<>=!~; ]", req, maxsplit=1)[0].lower().replace("_", "-")
        shutil.copytree(DISTS / name, site, dirs_exist_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
