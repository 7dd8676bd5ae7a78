"""Command line: run, validate, mig layouts/check; errors without tracebacks; pluggable subcommands."""

import json
import subprocess
import sys

from scheduler_core import cli
from tests.scheduler_core.conftest import SCENARIOS


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "scheduler_core", *args], capture_output=True, text=True,
                          cwd=SCENARIOS.parents[1], timeout=120)


def test_run_prints_a_summary_and_writes_json(tmp_path):
    out = tmp_path / "r.json"
    p = run_cli("run", str(SCENARIOS / "partial-gang-default.yaml"), "--json", str(out))
    assert p.returncode == 0, p.stderr
    assert "gang partial-start GPU-hours" in p.stdout
    assert "100% simulated" in p.stderr
    data = json.loads(out.read_text())
    assert data["scenario"] == "partial-gang-default" and data["gangs"]["partial_start_gpu_hours"] > 0


def test_validate_accepts_good_files_and_lists_field_errors_for_bad_ones(tmp_path):
    assert run_cli("validate", str(SCENARIOS / "lab1-mig.yaml")).returncode == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nhorizon: 2 weeks\npool: {node_groups: [{name: a, gpu: H100}]}\n")
    p = run_cli("validate", str(bad))
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    assert "horizon:" in p.stderr and "pool.node_groups.0.gpu:" in p.stderr
    p = run_cli("run", str(tmp_path / "missing.yaml"))
    assert p.returncode != 0 and "Traceback" not in p.stderr and "cannot read" in p.stderr


def test_mig_layouts_and_check(capsys):
    assert cli.main(["mig", "layouts", "--gpu", "a100-40gb", "--maximal"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "4g.20gb@0 3g.20gb@4" in lines and "7g.40gb@0" in lines and len(lines) == 239
    assert cli.main(["mig", "check", "--gpu", "a100-40gb", "3g.20gb@0", "2g.10gb@4", "1g.5gb@6"]) == 0
    assert capsys.readouterr().out.startswith("valid: 3g.20gb@0 2g.10gb@4 1g.5gb@6")
    assert cli.main(["mig", "check", "--gpu", "a100-40gb", "3g.20gb@0", "2g.10gb@2"]) == 1
    assert "2g.10gb@2 overlaps 3g.20gb@0" in capsys.readouterr().out
    assert cli.main(["mig", "check", "--gpu", "a100-80gb", "3g.40gb", "4g.40gb"]) == 1  # driver order
    assert "creation order matters" in capsys.readouterr().out


def test_other_modules_can_register_subcommands(capsys):
    def registrar(sub):
        p = sub.add_parser("hello-test")
        p.set_defaults(func=lambda args: print("hello") or 0)

    cli.register(registrar)
    try:
        assert cli.main(["hello-test"]) == 0
        assert capsys.readouterr().out.strip() == "hello"
    finally:
        cli.REGISTRARS.remove(registrar)


def test_cli_summary_leads_with_the_metric_that_shows_the_failure(capsys):
    from scheduler_core.cli import main
    from tests.scheduler_core.conftest import SCENARIOS

    assert main(["run", str(SCENARIOS / "shared-card-oom-timeslicing.yaml"), "--quiet"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("! Collateral OOM kills") and first.rstrip().endswith("21")


def test_a_20000_digit_number_in_a_scenario_file_is_a_clear_error_not_a_traceback(tmp_path):
    # issue 39.3 for the simulator's own command: YAML and JSON ints of 20,000 digits made int() raise
    # ValueError ("Exceeds the limit (4300 digits)") out of load_scenario, a traceback from run and validate
    huge = "9" * 20_000
    as_yaml = tmp_path / "huge.yaml"
    as_yaml.write_text(f"seed: {huge}\n" + (SCENARIOS / "lab0-device-facts.yaml").read_text().replace("seed: 0\n", ""))
    as_json = tmp_path / "huge.json"
    as_json.write_text('{"name": "x", "seed": ' + huge + ', "horizon": 60, "pool": {"node_groups": [{"name": "a"}]}}')
    for path, where in ((as_yaml, "line 1 column 7"), (as_json, "line 1 column 23")):
        for command in ("validate", "run"):
            p = run_cli(command, str(path))
            assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr[-500:]
            assert f"{where}: a number of 20,000 digits; numbers here have at most 64" in p.stderr


def test_a_scenario_file_that_is_not_utf8_names_the_byte(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"name: caf\xe9\n")
    p = run_cli("validate", str(bad))
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert "not UTF-8 text: byte 0xe9 at offset 9" in p.stderr
