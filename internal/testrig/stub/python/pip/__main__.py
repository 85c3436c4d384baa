# A fake pip for wlc's tests (see ../README.md). It installs where the
# real pip installs: into the running interpreter's environment.
import datetime
import json
import os
import re
import shutil
import sys
import sysconfig
import time
from pathlib import Path

DISTS = Path(__file__).resolve().parent.parent / "dists"
if not DISTS.is_dir():  # the copy a venv got (stub python3 -m venv) names them
    DISTS = Path((Path(__file__).resolve().parent / "DISTS").read_text().strip())


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


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(?:==\s*([^;\s,]+))?")


def parse_req(req):
    m = REQ.match(req)
    if not m:
        return None, None
    return canonical(m.group(1)), m.group(3)


def metadata(path):
    """Name, version and Requires-Dist (without extras' markers) of a
    .dist-info directory, as pip reads METADATA."""
    name = version = None
    requires = []
    try:
        text = (path / "METADATA").read_text()
    except OSError:
        return None, None, []
    for line in text.splitlines():
        k, _, v = line.partition(":")
        v = v.strip()
        if k == "Name":
            name = canonical(v)
        elif k == "Version":
            version = v
        elif k == "Requires-Dist" and "extra ==" not in v:
            requires.append(v)
    return name, version, requires


def dist_info(d):
    for p in sorted(d.glob("*.dist-info")):
        return metadata(p)
    return None, None, []


def candidate(name, pin):
    """The stub distribution for name (at version pin): dists/<name>-<pin>
    or dists/<name> when its version matches."""
    for d in ([DISTS / ("%s-%s" % (name, pin))] if pin else []) + [DISTS / name]:
        if d.is_dir():
            _, version, _ = dist_info(d)
            if pin is None or version == pin:
                return d
    return None


def installed(name):
    """(version, directory) of name as this interpreter sees it: the first
    .dist-info on sys.path, as importlib.metadata finds it."""
    for entry in sys.path:
        p = Path(entry or ".")
        if not p.is_dir():
            continue
        for info in p.glob("*.dist-info"):
            n, version, _ = metadata(info)
            if n == name:
                return version, p
    return None, None


def in_venv():
    return sys.prefix != sys.base_prefix


def target_dir(user):
    """Where pip installs: a venv's own site-packages; else with --user the
    user site, else the interpreter's site (both WLC_STUB_PIP_SITE in the
    tests, the site an image's python3 has on PYTHONPATH)."""
    if in_venv():
        return sysconfig.get_paths()["purelib"]
    return os.environ.get("WLC_STUB_PIP_SITE")


def main(argv):
    if argv[:1] == ["--version"]:
        where = Path(__file__).resolve().parent
        print("pip 24.0 from %s (python %d.%d)" % (where, sys.version_info[0], sys.version_info[1]))
        return 0
    if argv[:1] != ["install"]:
        sys.stderr.write("ERROR: the stub pip only installs\n")
        return 2
    reqs = [a for a in argv[1:] if not a.startswith("-")]
    unknown = [a for a in argv[1:] if a.startswith("-") and a not in ("--quiet", "-q", "--user", "--upgrade", "-U")]
    if unknown:
        sys.stderr.write("ERROR: no such option: %s\n" % unknown[0])
        return 2
    user = "--user" in argv
    if user and in_venv():
        sys.stderr.write("ERROR: Can not perform a '--user' install. User site-packages are not visible in this virtualenv.\n")
        return 1
    target = target_dir(user)
    flags = {"site": target or "", "venv": sys.prefix if in_venv() else ""}
    if not target:
        record(argv, flags)
        sys.stderr.write("ERROR: WLC_STUB_PIP_SITE is not set\n")
        return 1
    # Resolve first, as pip does before it changes anything: each
    # requirement and what it requires, to one stub distribution each (a
    # pin wins over an unpinned requirement of the same name).
    pins, order, queue = {}, [], list(reqs)
    while queue:
        req = queue.pop(0)
        name, pin = parse_req(req)
        if name is None:
            sys.stderr.write("ERROR: Invalid requirement: '%s'\n" % req)
            return 1
        if name in pins and (pins[name] is not None or pin is None):
            continue
        if name not in pins:
            order.append(name)
        pins[name] = pin
        src = candidate(name, pin)
        if src is None:
            record(argv, flags)
            sys.stderr.write("ERROR: Could not find a version that satisfies the requirement %s (from versions: none)\n" % req)
            return 1
        queue.extend(dist_info(src)[2])
    plan = []
    for name in order:
        pin = pins[name]
        src = candidate(name, pin)
        have, where = installed(name)
        if have is not None and (pin is None or have == pin):
            continue  # Requirement already satisfied
        plan.append((name, dist_info(src)[1], src, have, where))
    flags["installed"] = " ".join("%s==%s" % (n, v or "0") for n, v, _, _, _ in plan)
    record(argv, flags)
    if os.environ.get("WLC_STUB_PIP_MARK"):
        Path(os.environ["WLC_STUB_PIP_MARK"]).touch()  # "the install has started", for a test to act on
    delay = float(os.environ.get("WLC_STUB_PIP_DELAY", "0") or 0)
    if delay > 0:
        time.sleep(delay)  # downloading and building, as long as the test says
    fails = int(os.environ.get("WLC_STUB_PIP_FAILS", "0") or 0)
    Path(target).mkdir(parents=True, exist_ok=True)
    counter = Path(target) / ".stub-pip-calls"
    calls = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(calls + 1))
    if calls < fails:
        sys.stderr.write("ERROR: Could not install packages due to an OSError: HTTPSConnectionPool(host='pypi.org', port=443): Read timed out.\n")
        return 1
    for name, version, src, have, where in plan:
        if have is not None:
            if Path(where).resolve() != Path(target).resolve():
                # pip leaves a distribution outside the environment alone.
                sys.stderr.write("Not uninstalling %s at %s, outside environment %s\n" % (name, where, sys.prefix))
            else:
                for top in sorted(src.iterdir()):
                    old = Path(target) / top.name
                    shutil.rmtree(old, ignore_errors=True)
                for info in Path(target).glob("%s-*.dist-info" % name.replace("-", "_")):
                    shutil.rmtree(info, ignore_errors=True)
        shutil.copytree(src, target, dirs_exist_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
