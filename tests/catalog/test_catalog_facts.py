"""Issue 33: facts of the shipped catalog that upstream contradicts, one test per kind of error.

Each fact was re-read upstream (the entry's sources name where and when); these tests keep the
catalog from drifting back to what the audit found.
"""

import json

import pytest

from placement.catalog.files import read_catalog_dir
from placement.catalog.schemas import CncfStatus
from tests.conftest import CATALOG_DIR

UPSTREAM_DIR = CATALOG_DIR.parent / "upstream"


@pytest.fixture(scope="module")
def documents():
    return {d.slug: d for d in read_catalog_dir(CATALOG_DIR)}


def text_of(doc) -> str:
    p = doc.placement
    return " ".join([doc.summary, p.promise, *p.non_promise, *p.dependencies.upstream, *p.dependencies.downstream,
                     p.costs.compatibility, p.costs.intrusiveness, p.landscape.kubernetes_versions]).lower()


def test_an_option_is_not_recorded_as_a_dependency(documents):
    # Grove has kai, kube and volcano scheduler backends; Dynamo documents LWS + Volcano beside Grove;
    # llm-d ships its own endpoint picker (llm-d-inference-scheduler) for the Inference Extension's API.
    assert "kai-scheduler" not in documents["grove"].placement.dependencies.requires
    assert "grove" not in documents["nvidia-dynamo"].placement.dependencies.requires
    assert "gateway-api-inference-extension" not in documents["llm-d"].placement.dependencies.requires
    assert "volcano" in text_of(documents["grove"]) and "kube-scheduler" in text_of(documents["grove"])
    assert "volcano" in text_of(documents["nvidia-dynamo"]) and "lws" in text_of(documents["nvidia-dynamo"]).replace("leaderworkerset", "lws")


def test_licences_and_foundation_status_that_changed_upstream(documents):
    assert documents["runai"].placement.landscape.license != "Proprietary"  # open source since v3.0
    assert documents["hami"].placement.landscape.cncf_status == CncfStatus.INCUBATING  # July 2026
    assert documents["hami-core"].placement.landscape.cncf_status == CncfStatus.INCUBATING
    assert documents["llm-d"].placement.landscape.cncf_status == CncfStatus.SANDBOX  # March 2026
    assert documents["nvidia-dra-driver"].placement.landscape.repository == "https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu"


KUBERNETES_CORE = ["kube-scheduler", "kubernetes-workload-api", "dra", "device-plugin-framework", "kubernetes-job",
                   "resource-quota", "topology-manager"]


def test_kubernetes_1_37_is_the_release_the_core_entries_describe(documents):
    for slug in KUBERNETES_CORE:
        assert documents[slug].placement.landscape.latest_release.version == "v1.37.0", slug
    # Workload and PodGroup (gang scheduling) are beta in 1.37: kube-scheduler places gangs through them.
    assert "beta in kubernetes 1.37" in text_of(documents["kube-scheduler"])
    assert "beta" in text_of(documents["kubernetes-workload-api"])
    assert "gang-scheduling" in documents["kubernetes-workload-api"].placement.capabilities


def _recorded(repository: str) -> dict | None:
    path = UPSTREAM_DIR / (repository.removeprefix("https://github.com/").replace("/", "+") + ".json")
    return json.loads(path.read_text()) if path.exists() else None


def test_every_latest_release_is_a_tag_upstream_lists(documents):
    # grove v0.1.0 and gpushare-scheduler-extender v1.11.0 were never tagged.
    missing = {}
    for slug, doc in documents.items():
        meta = doc.placement.landscape
        recorded = _recorded(meta.repository)
        if recorded is None or meta.latest_release.date.isoformat() > recorded["checked"]:
            continue  # no recorded data, or a release after the snapshot was taken
        if meta.latest_release.version.split(" ")[0] not in {t["name"] for t in recorded["tags"]}:
            missing[slug] = meta.latest_release.version
    assert not missing
    assert _recorded("https://github.com/ai-dynamo/grove") is not None


def test_time_slicing_does_not_promise_the_devices_field(documents):
    # k8s-device-plugin api/config/v1/replicas.go: "Customizing the 'devices' field ... is not yet
    # supported in the config. Ignoring..." - a sharing entry applies to every GPU of the node.
    text = text_of(documents["time-slicing"])
    assert "unless its devices field names" not in text
    assert "devices" in text and "ignore" in text


def test_prerequisites_and_modes_upstream_documents(documents):
    isolator = text_of(documents["kai-resource-isolator"])
    assert "v0.17" in isolator and "hamicore" in isolator
    vgpu = documents["volcano-vgpu-device-plugin"]
    assert "dynamic mig mode" in text_of(vgpu)
    assert any("dynamic MIG" in s.title and s.checked for s in vgpu.placement.sources)
    assert "aws and azure providers" not in text_of(documents["karpenter"])
    assert "providers" in text_of(documents["karpenter"])


NEW_IN_2026 = {"nvidia-topograph", "kaito", "amd-gpu-operator", "amd-device-plugin", "llm-d-router", "soperator", "slurm-bridge", "dranet"}


def test_the_projects_that_matter_in_2026_are_in_with_a_read_source_for_release_and_licence(documents):
    assert NEW_IN_2026 <= set(documents), NEW_IN_2026 - set(documents)
    for slug in NEW_IN_2026:
        sources = documents[slug].placement.sources
        for fact in ("landscape.latest_release", "landscape.license"):
            assert any(s.read and fact in s.supports for s in sources), (slug, fact)
