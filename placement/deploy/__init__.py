"""From decision to cluster and back (pure Python, no Django).

* :func:`export_scenario`: a scenario with its stack applied (what the simulator ran) -> the
  Kubernetes objects and Helm values per pool and per chosen project (:class:`Export`).
* :func:`readback.read_export`: the cluster part of an export (pools, data planes, queues) back into a
  scenario document, for the round trip.
* :func:`cluster_import.cluster_scenario`: ``kubectl get nodes/pods -o json`` (+ Kueue ClusterQueues or Volcano
  Queues) -> a scenario document; :class:`SnapshotInvalid` lists per-object errors.
"""

from placement.deploy.bundle import Export, ExportFile
from placement.deploy.data_plane import ExportError
from placement.deploy.export import export_scenario

__all__ = ["Export", "ExportFile", "ExportError", "export_scenario"]
