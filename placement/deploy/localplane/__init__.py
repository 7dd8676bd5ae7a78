"""A local Kubernetes control plane for trying bundles: etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, KWOK and Kueue built from the Go modules under controlplane/, started on loopback; Volcano
and scheduler-plugins' coscheduling started on demand for the bundles whose pods name them.

Pure Python (no Django, no Celery): :mod:`.plane` starts and stops the processes, :mod:`.kube` talks
to the API server over HTTPS, :mod:`.trial` applies a scenario's bundle on KWOK nodes and compares what
the real controllers did with the simulator's answer, :mod:`.scenarios` generates the differential
check's scenarios. ``python -m placement.deploy.localplane up`` is ``make cluster``. docs/controlplane.md.
"""

from placement.deploy.localplane.plane import ComponentFailed, LocalPlane, Ports

__all__ = ["ComponentFailed", "LocalPlane", "Ports"]
