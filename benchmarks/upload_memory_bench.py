"""Peak memory of one cluster upload (issue 37.6), each case in a fresh process.

    .venv/bin/python benchmarks/upload_memory_bench.py [--mib 120] [--only NAME]

Each case is a snapshot of 5,000 GPU nodes (GPU Feature Discovery labels, as kubectl prints them)
and a pods file, read the way the import page and `manage.py import_cluster` read it: the three
files under one budget (`upload_budget`, `decode_snapshot_file`), then `snapshot_scenario` and the
scenario YAML the page shows. The figure is the process's peak RSS (Django and the importer loaded
included; the line "process with Django and the importer loaded" is that part alone). Target: under
256 MB (244 MiB) for every upload the import accepts.

  kubectl      a --mib MiB pods file shaped like `kubectl get pods -A -o json` (managedFields,
               env, volumes, probes, container statuses: what the reader drops)
  most pods    150,000 pods carrying only what the import reads, unique names (the most pods accepted)
  worst        150,000 pods, each of its own Job, with unique names as long as the upload budget
               accepts (what is kept grows with the names, what the import builds with the pods),
               one 1 MiB object of the most wasteful JSON ([[],[],...]) among them and 1 MiB of
               it outside `items`: the most an accepted upload makes the reader hold
  past-budget  the worst case with 12 characters more per name: refused, naming the budget

For comparison, "json.loads" is the peak of reading the same pods file whole with json.loads.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SETUP = ("import os,sys; os.environ.setdefault('DJANGO_SETTINGS_MODULE','config.settings'); import django; django.setup()\n"
         "import yaml\n"
         "from django.core.exceptions import ValidationError\n"
         "from placement.deploy.services.imports import check_file_roles, decode_snapshot_file, snapshot_scenario, upload_budget\n")
UPLOAD = SETUP + (
    "kept = upload_budget()\n"
    "try:\n"
    "    nodes = decode_snapshot_file(open(sys.argv[1], 'rb'), 'nodes_file', 'nodes', kept)\n"
    "    pods = decode_snapshot_file(open(sys.argv[2], 'rb'), 'pods_file', 'pods', kept)\n"
    "    check_file_roles(nodes, pods)\n"
    "    document = snapshot_scenario(nodes, pods, None)\n"
    "    text = yaml.safe_dump(document, sort_keys=False)\n"
    "    print(f'accepted: {len(document[\"workloads\"])} workloads, kept {kept.bytes / 2**20:.1f} MiB', file=sys.stderr)\n"
    "except ValidationError as exc:\n"
    "    print('refused: ' + '; '.join(f'{k}: {v[0]}' for k, v in exc.message_dict.items()), file=sys.stderr)\n")
JSON_LOADS = "import json,sys; d=json.loads(open(sys.argv[2],'rb').read())\n"
TARGET_MIB = 256 * 10**6 / 2**20  # 256 MB


def pod(i: int, bulky: bool, pad: int = 0) -> dict:
    """Pod i of job i; `pad` characters more in the job's (and so the pod's) unique name."""
    job = f"job-{i:06d}" + ("-" + "j" * (pad - 1) if pad else "")
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": f"{job}-worker-0", "namespace": f"team-{i % 40:02d}",
                      "labels": {"job-name": job, "kueue.x-k8s.io/queue-name": f"q-{i % 40:02d}"}},
         "spec": {"nodeName": f"gpu-{i % 5000:05d}", "priority": 0,
                  "containers": [{"name": "main", "resources": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}}]},
         "status": {"phase": "Running"}}
    if bulky:
        p["metadata"]["managedFields"] = [{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
                                           "fieldsType": "FieldsV1", "fieldsV1": {f"f:field{k}": {} for k in range(40)}}] * 2
        p["spec"]["containers"][0].update(env=[{"name": f"ENV_{k}", "value": "x" * 40} for k in range(20)],
                                          volumeMounts=[{"name": f"v{k}", "mountPath": f"/mnt/{k}"} for k in range(6)],
                                          image="registry.example/ml/worker:1.0", command=["python", "-m", "train"])
        p["spec"]["volumes"] = [{"name": f"v{k}", "configMap": {"name": f"cm-{k}"}} for k in range(6)]
        p["status"]["conditions"] = [{"type": t, "status": "True", "lastTransitionTime": "2026-12-01T00:00:00Z"}
                                     for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")]
        p["status"]["containerStatuses"] = [{"name": "main", "ready": True, "restartCount": 0, "image": "x" * 60,
                                             "imageID": "sha256:" + "0" * 64, "containerID": "containerd://" + "0" * 64}]
    return p


WASTE = "[" + ",".join(["[]"] * (((1 << 20) - 4096) // 3)) + "]"  # just under 1 MiB: ~22 MiB as a tree


def write_pods(path: Path, *, mib: int = 10**6, bulky: bool = False, most: int | None = None,
               pad: int = 0, waste: bool = False) -> int:
    one = len(json.dumps(pod(0, bulky, pad)))
    count = min(mib * 2**20 // (one + 2), most or 10**9)
    with path.open("w") as f:
        f.write('{"apiVersion": "v1", "kind": "List", ' + (f'"metadata": {WASTE}, ' if waste else "") + '"items": [')
        for i in range(count):
            item = json.dumps(pod(i, bulky, pad))
            if waste and i == count // 2:
                item = item[:-1] + f', "waste": {WASTE}' + "}"
            f.write(("," if i else "") + item)
        f.write("]}")
    return count


def write_nodes(path: Path) -> None:
    from placement.deploy.synthetic_cluster import large_snapshot

    nodes, _ = large_snapshot(5000, 0)
    path.write_text(json.dumps(nodes))


def pad_to_budget(nodes: Path, pods: int) -> int:
    """The name padding at which `pods` pods (every name unique) and the 5,000 nodes keep 99% of the
    upload budget: each character of padding is kept twice (the pod's name, its owner's)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from placement.deploy.services.imports import MAX_KEPT_BYTES, decode_snapshot_file
    from placement.deploy.snapshot_objects import Kept, pod_item

    def kept_by(pad: int) -> tuple[float, float]:
        kept = Kept()
        decode_snapshot_file(nodes.read_bytes(), "nodes", "nodes", kept)
        for i in range(100):
            pod_item(pod(i, False, pad), kept)
        before = kept.bytes
        for i in range(100, 1100):
            pod_item(pod(i, False, pad), kept)
        return before, (kept.bytes - before) / 1000

    before, short = kept_by(0)
    _, long = kept_by(200)
    return int((MAX_KEPT_BYTES * 0.99 - before) / pods - short) * 200 // int(long - short)


def peak(code: str, nodes: Path, pods: Path) -> tuple[int, str]:
    out = subprocess.run([sys.executable, "-c", code + "import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)",
                          str(nodes), str(pods)], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    return int(out.stdout.split()[-1]) // 1024, out.stderr.strip().splitlines()[-1] if out.stderr.strip() else ""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=120)
    parser.add_argument("--only", help="run one case: kubectl, most-pods, worst, past-budget")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        nodes = Path(tmp) / "nodes.json"
        write_nodes(nodes)
        base, _ = peak(SETUP, nodes, nodes)
        print(f"process with Django and the importer loaded: {base} MiB; target: under {TARGET_MIB:.0f} MiB (256 MB)")
        pad = pad_to_budget(nodes, 150_000)
        cases = {
            "kubectl": {"mib": args.mib, "bulky": True},
            "most-pods": {"most": 150_000},
            "worst": {"most": 150_000, "pad": pad, "waste": True},
            "past-budget": {"most": 150_000, "pad": pad + 12, "waste": True},
        }
        worst = 0
        for name, shape in cases.items():
            if args.only and name != args.only:
                continue
            pods = Path(tmp) / f"pods-{name}.json"
            count = write_pods(pods, **shape)
            size = pods.stat().st_size / 2**20
            upload, said = peak(UPLOAD, nodes, pods)
            line = f"{name}: {count:,} pods, {size:.0f} MiB pods file: upload peak {upload:,} MiB ({said})"
            if name in ("kubectl", "most-pods"):
                line += f"; json.loads of the pods file alone peaks at {peak(JSON_LOADS, nodes, pods)[0]:,} MiB"
            print(line, flush=True)
            worst = max(worst, upload)
            pods.unlink()
        print(f"highest upload peak: {worst} MiB = {worst * 2**20 / 10**6:.0f} MB "
              f"[target < 256 MB: {'met' if worst < TARGET_MIB else 'MISSED'}]")


if __name__ == "__main__":
    main()
