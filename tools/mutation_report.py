"""Print the mutation score per module from mutmut's results (run after `mutmut run`).

`--services`: the Django services' run (tools/mutation_services.py, `make mutation-services`).
`--names FILE`: only the mutants named in FILE (one a line, as tools/mutation_sample.py prints),
with the Wilson 95% interval of each module's score: the sample's estimate of the whole module.

Score = killed / (killed + survived + timeout); 'no tests' mutants count as survivors, because a
line no test reaches is exactly the gap a mutation audit is for. A mutant not run yet counts as
neither.
"""

from __future__ import annotations

import math
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from mutation_sample import module_of  # noqa: E402

KILLED = {"killed"}
SURVIVED = {"survived", "no tests", "timeout", "suspicious"}


def wilson(killed: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval for a proportion killed/n (95% by default)."""
    if not n:
        return 0.0, 1.0
    p = killed / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def main(argv: list[str]) -> int:
    mutmut = [sys.executable, "-m", "mutmut"]
    if "--services" in argv:  # mutmut with the services' configuration: it lists only their files
        mutmut = [sys.executable, str(Path(__file__).with_name("mutation_services.py"))]
    only: set[str] | None = None
    if "--names" in argv:
        path = Path(argv[argv.index("--names") + 1])
        only = {line.strip() for line in path.read_text().splitlines() if line.strip()}
    out = subprocess.run([*mutmut, "results", "--all", "true"],
                         capture_output=True, text=True, check=False).stdout
    per_module: dict[str, Counter] = defaultdict(Counter)
    for line in out.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if not name or "__mutmut_" not in name or (only is not None and name not in only):
            continue
        per_module[module_of(name)][status] += 1
    if not per_module:
        print("no mutmut results: run `make mutation` (or `make mutation-services`) first")
        return 1
    total = Counter()
    interval = " 95% interval" if only is not None else ""
    print(f"{'module':45} {'killed':>7} {'survived':>9} {'score':>7}{interval}")
    for module, c in sorted(per_module.items()):
        killed = sum(c[s] for s in KILLED)
        alive = sum(c[s] for s in SURVIVED)
        if not killed + alive:
            continue  # not run (make mutation MUTATE=<another module>)
        total.update(killed=killed, alive=alive)
        line = f"{module:45} {killed:7d} {alive:9d} {killed / (killed + alive):7.1%}"
        if only is not None:
            low, high = wilson(killed, killed + alive)
            line += f" {low:6.1%} - {high:.1%}"
        print(line)
    print(f"{'all':45} {total['killed']:7d} {total['alive']:9d} "
          f"{total['killed'] / max(1, total['killed'] + total['alive']):7.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
