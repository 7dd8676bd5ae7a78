"""Print the mutation score per module from mutmut's results (run after `mutmut run`).

`--services`: the Django services' run (tools/mutation_services.py, `make mutation-services`).

Score = killed / (killed + survived + timeout); 'no tests' mutants count as survivors, because a
line no test reaches is exactly the gap a mutation audit is for.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from collections import Counter, defaultdict

KILLED = {"killed"}
SURVIVED = {"survived", "no tests", "timeout", "suspicious"}


def main(argv: list[str]) -> int:
    mutmut = [sys.executable, "-m", "mutmut"]
    if "--services" in argv:  # mutmut with the services' configuration: it lists only their files
        mutmut = [sys.executable, str(Path(__file__).with_name("mutation_services.py"))]
    out = subprocess.run([*mutmut, "results", "--all", "true"],
                         capture_output=True, text=True, check=False).stdout
    per_module: dict[str, Counter] = defaultdict(Counter)
    for line in out.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if not name or "__mutmut_" not in name:
            continue
        module = name.split(".x_")[0].split(".xǁ")[0]
        per_module[module][status] += 1
    if not per_module:
        print("no mutmut results: run `make mutation` (or `make mutation-services`) first")
        return 1
    total = Counter()
    print(f"{'module':45} {'killed':>7} {'survived':>9} {'score':>7}")
    for module, c in sorted(per_module.items()):
        killed = sum(c[s] for s in KILLED)
        alive = sum(c[s] for s in SURVIVED)
        if not killed + alive:
            continue  # not run (make mutation MUTATE=<another module>)
        total.update(killed=killed, alive=alive)
        print(f"{module:45} {killed:7d} {alive:9d} {killed / max(1, killed + alive):7.1%}")
    print(f"{'all':45} {total['killed']:7d} {total['alive']:9d} "
          f"{total['killed'] / max(1, total['killed'] + total['alive']):7.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
