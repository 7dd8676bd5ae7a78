"""Peak memory of reading one cluster snapshot file (issue 37.6), each way in a fresh process.

    .venv/bin/python benchmarks/upload_memory_bench.py [--mib 120]

Writes a pods file of about --mib MiB in two shapes: "kubectl" (synthetic GPU pods with what a
real `kubectl get pods -A -o json` carries besides the requests: managedFields, env, volumes,
probes, container statuses) and "minimal" (only the fields the import reads, so nothing can be
pruned: the worst case for a file of that size). For each it prints the peak RSS of a process that
reads it with `json.loads` of the whole file (before) and with `decode_snapshot_file`, the
streaming, pruning reader the upload and import_cluster use (after).
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

READ = {
    "json.loads": "import json,sys; d=json.loads(open(sys.argv[1],'rb').read())",
    "decode_snapshot_file": ("import os,sys; os.environ.setdefault('DJANGO_SETTINGS_MODULE','config.settings'); import django; django.setup(); "
                             "from placement.deploy.services.imports import decode_snapshot_file; "
                             "from django.core.exceptions import ValidationError\n"
                             "try: d=decode_snapshot_file(open(sys.argv[1],'rb'),'pods')\n"
                             "except ValidationError as e: print(e.messages[0], file=sys.stderr)"),
}
BASELINE = "import os,sys; os.environ.setdefault('DJANGO_SETTINGS_MODULE','config.settings'); import django; django.setup(); import placement.deploy.services.imports"


def pod(i: int, bulky: bool) -> dict:
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": f"job-{i:06d}-worker-0", "namespace": f"team-{i % 40:02d}",
                      "labels": {"job-name": f"job-{i:06d}", "kueue.x-k8s.io/queue-name": f"q-{i % 40:02d}"}},
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


def write(path: Path, mib: int, bulky: bool, most: int | None = None) -> int:
    one = len(json.dumps(pod(0, bulky)))
    count = min(mib * 2**20 // (one + 2), most or 10**9)
    with path.open("w") as f:
        f.write('{"apiVersion": "v1", "kind": "List", "items": [')
        for i in range(count):
            f.write(("," if i else "") + json.dumps(pod(i, bulky)))
        f.write('], "metadata": {}}')
    return count


def peak_mib(code: str, path: Path) -> int:
    out = subprocess.run([sys.executable, "-c", code + "\nimport resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)",
                          str(path)], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    return int(out.stdout.split()[-1]) // 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=120)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = peak_mib(BASELINE, Path(tmp))
        print(f"process with Django and the importer loaded: {base} MiB")
        # minimal: the most pods accepted (150,000), then a file of --mib MiB (refused past 150,000).
        for shape, bulky, most in (("kubectl", True, None), ("minimal", False, 150_000), ("minimal", False, None)):
            path = Path(tmp) / f"pods-{shape}.json"
            count = write(path, args.mib, bulky, most)
            size = path.stat().st_size / 2**20
            figures = ", ".join(f"{name} peak {peak_mib(code, path):,} MiB" for name, code in READ.items())
            print(f"{shape}: {count:,} pods, {size:.0f} MiB file: {figures}", flush=True)


if __name__ == "__main__":
    main()
