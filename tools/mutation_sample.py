"""A seeded random sample of mutmut's mutants, for modules too large to run whole here.

A whole `mutmut run` of the policies (about 3,500 mutants, 20-100 s of covering tests for each
survivor) or of the Django services (12 s a mutant on one child) takes many hours on the 2-core
machine. A simple random sample of N mutants per module estimates the module's score with a known
error (the Wilson 95% interval printed by `tools/mutation_report.py --names`), and every sampled
survivor can still be read and either killed or judged equivalent.

    python tools/mutation_sample.py --per-module 60 --seed 19 scheduler_core.policies > names.txt

prints one mutant name per line, drawn from the mutants mutmut generated under `mutants/`. With
`--run` it does the whole audit (`make mutation-sample`): a `mutmut run` of one small module
generates every mutant and the per-test statistics, then the sample runs and its score is printed;
`--services` does the same with tools/mutation_services.py's configuration. The same seed and the
same code give the same sample, so a later run measures the same mutants after a fix.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from collections import defaultdict
from pathlib import Path


def exit_codes(root: Path = Path("mutants")) -> dict[str, int | None]:
    """Every generated mutant name with its recorded exit code (None: not run yet), from mutmut's
    per-file .meta records."""
    codes: dict[str, int | None] = {}
    for meta in sorted(root.rglob("*.py.meta")):
        codes.update(json.loads(meta.read_text())["exit_code_by_key"])
    return codes


def generated_mutants(root: Path = Path("mutants")) -> dict[str, list[str]]:
    """Every generated mutant name, by module."""
    by_module: dict[str, list[str]] = defaultdict(list)
    for name in exit_codes(root):
        by_module[module_of(name)].append(name)
    return by_module


def module_of(mutant_name: str) -> str:
    """`scheduler_core.policies.kai.x__kai_number__mutmut_1` -> `scheduler_core.policies.kai`."""
    return mutant_name.split(".x_")[0].split(".xǁ")[0]


def sample(by_module: dict[str, list[str]], prefixes: list[str], per_module: int, seed: int) -> list[str]:
    """`per_module` names from each module under one of `prefixes` (all of a smaller module)."""
    chosen: list[str] = []
    for module in sorted(by_module):
        if prefixes and not any(module == p or module.startswith(p + ".") for p in prefixes):
            continue
        names = sorted(by_module[module])
        rng = random.Random(f"{seed}:{module}")  # one stream per module: adding a module moves no other
        chosen += sorted(rng.sample(names, min(per_module, len(names))))
    return chosen


# mutmut's exit codes (mutmut.stats.status_by_exit_code): killed; survived, no tests or timeout.
# Any other (not run, interrupted) is run again.
KILLED_CODES = {1, 3}
SURVIVED_CODES = {0, 5, 33, 36, -24, 24, 152, 255}

# A small module of each configuration whose `mutmut run` generates every mutant and the statistics.
FIRST = {"pure": "placement.rules.errors.*", "services": "placement.access.permissions.*"}


def run_sample(names: list[str], services: bool, out: Path, rerun: bool = False) -> int:
    """Run mutmut on `names` not decided yet (with `rerun`, every one not killed: after new tests)
    and print the score per module of all of `names` with its interval."""
    here = Path(__file__).parent
    mutmut = ([sys.executable, str(here / "mutation_services.py")] if services
              else [sys.executable, "-m", "mutmut"])
    children = ["--max-children", "1" if services else "2"]
    out.write_text("\n".join(names) + "\n")
    keep = KILLED_CODES if rerun else KILLED_CODES | SURVIVED_CODES
    decided = {n for n, code in exit_codes(out.parent).items() if code in keep}
    todo = [n for n in names if n not in decided]
    if todo:  # mutmut runs every mutant it is given by name again, even one already decided
        subprocess.run([*mutmut, "run", *children, *todo], check=False)
    report = [sys.executable, str(here / "mutation_report.py"), "--names", str(out)]
    return subprocess.run(report + (["--services"] if services else []), check=False).returncode


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prefixes", nargs="*", help="dotted module names or packages (default: all)")
    parser.add_argument("--per-module", type=int, default=60)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--root", type=Path, default=Path("mutants"))
    parser.add_argument("--run", action="store_true", help="generate, run the sample and report")
    parser.add_argument("--services", action="store_true", help="the Django services' configuration")
    parser.add_argument("--rerun", action="store_true", help="run the sample's survivors again (after new tests)")
    args = parser.parse_args(argv)
    if args.per_module < 1:
        parser.error("--per-module: must be at least 1")
    if args.run:  # generate every mutant (and the test statistics) with one small module's run
        first = FIRST["services" if args.services else "pure"]
        tool = (["tools/mutation_services.py", "run"] if args.services
                else ["-m", "mutmut", "run", "--max-children", "2"])
        subprocess.run([sys.executable, *tool, first], check=False)
    by_module = generated_mutants(args.root)
    if not by_module:
        print(f"no generated mutants under {args.root}/: run `mutmut run` first", file=sys.stderr)
        return 1
    names = sample(by_module, args.prefixes, args.per_module, args.seed)
    if not names:
        print(f"no module matches {' '.join(args.prefixes)}", file=sys.stderr)
        return 1
    if args.run:
        return run_sample(names, args.services, args.root / "sample.txt", args.rerun)
    print("\n".join(names))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
