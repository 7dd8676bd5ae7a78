"""``python -m placement.deploy.localplane up`` starts the plane and keeps it until Ctrl-C or
``python -m placement.deploy.localplane stop``; either stops every process it started. ``--with volcano``
(or ``coscheduling``) starts that scheduler and its controllers too."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

from placement.deploy.localplane.plane import COMPONENTS, ComponentFailed, LocalPlane, Ports, port_base
from placement.deploy.localplane.trial import SCHEDULER_COMPONENTS

# --with NAME -> the optional components started beside the plane's own
EXTRAS = {"volcano": SCHEDULER_COMPONENTS["volcano"], "coscheduling": SCHEDULER_COMPONENTS["scheduler-plugins-scheduler"]}


def _pidfile(base: int) -> Path:
    root = Path(os.environ.get("ATLAS_CONTROLPLANE_CACHE", Path.home() / ".cache" / "atlas-controlplane"))
    root.mkdir(parents=True, exist_ok=True)
    return root / f"plane-{base}.pid"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m placement.deploy.localplane")
    parser.add_argument("command", choices=["up", "stop"])
    parser.add_argument("--with", dest="extras", action="append", default=[], choices=sorted(EXTRAS),
                        help="also start this scheduler (repeatable)")
    args = parser.parse_args(argv)
    try:
        base = port_base()
    except ComponentFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    pidfile = _pidfile(base)
    if args.command == "stop":
        if not pidfile.exists():
            print(f"no plane on port base {base}", file=sys.stderr)
            return 1
        os.kill(int(pidfile.read_text()), signal.SIGTERM)
        print(f"stopping the plane on port base {base}")
        return 0
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    extras = tuple(c for name in args.extras for c in EXTRAS[name])
    plane = LocalPlane(ports=Ports(base), components=COMPONENTS + tuple(dict.fromkeys(extras)),
                       progress=lambda m: print(m, flush=True))
    try:
        plane.start()
    except ComponentFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    pidfile.write_text(str(os.getpid()))
    print(f"control plane up: export KUBECONFIG={plane.kubeconfig}\n"
          f"logs in {plane.workdir}; Ctrl-C or `python -m placement.deploy.localplane stop` stops it", flush=True)
    try:
        while True:
            dead = [p for p in plane.processes if p.popen.poll() is not None]
            if dead:
                print(f"error: {dead[0].component} exited:\n{plane.log_tail(dead[0].component)}", file=sys.stderr)
                return 1
            time.sleep(1)
    except KeyboardInterrupt:
        return 0
    finally:
        print("stopping the control plane", flush=True)
        plane.stop()
        pidfile.unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main())
