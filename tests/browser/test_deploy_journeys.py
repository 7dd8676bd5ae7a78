"""From decision to cluster and back, in a browser:

1. An architect composes a mixed stack, saves it, opens its deploy page, reads a file's preview and
   downloads the .zip.
2. The architect uploads a cluster snapshot (kubectl JSON) on the stack page and watches the stack
   run on the cluster's shape.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import expect

from placement.evidence.models import SimulationRun
from tests.browser.conftest import login
from tests.conftest import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "clusters" / "sample"


def compose_and_save(page, profile: str) -> None:
    page.goto("/compose/")
    page.get_by_label("Workload profile").select_option(profile)
    page.get_by_role("button", name="Compose").click()
    card = page.locator("#compose-result .stack-card").first
    card.locator("summary").first.click()  # open the top stack's detail
    card.get_by_role("button", name="Save stack #1").click()
    page.wait_for_url(re.compile(r"/stacks/\d+/$"))


def test_architect_composes_saves_opens_the_deploy_page_and_downloads_the_manifests(page):
    make_user("arch", "architect")
    login(page, "arch")
    compose_and_save(page, "mixed")
    page.get_by_role("link", name=re.compile("Deploy: the Kubernetes objects")).click()
    page.wait_for_url(re.compile(r"/stacks/\d+/deploy/$"))
    expect(page.get_by_role("heading", level=1)).to_contain_text("Deploy")
    expect(page.get_by_text(re.compile(r"Numbers from .*plan"))).to_be_visible()  # no run: the stack's own plan
    tree = page.get_by_role("navigation", name="Files")
    tree.get_by_role("link", name="gpu-operator/mig-parted-config.yaml").click()
    preview = page.locator("section.file-preview", has=page.locator("h2", has_text="gpu-operator/mig-parted-config.yaml"))
    expect(preview.locator("pre")).to_contain_text("mig-configs:")
    expect(preview.locator("pre")).to_contain_text("device-filter")  # one entry per GPU model
    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download .zip").click()
    download = download_info.value
    assert download.suggested_filename.endswith(".zip")
    names = zipfile.ZipFile(io.BytesIO(Path(download.path()).read_bytes())).namelist()
    assert any(n.endswith("/gpu-operator/values.yaml") for n in names)
    # the mixed stack's shared pool runs on Volcano's vGPU device plugin, installed by the script; HAMi is not (issue 30)
    assert any(n.endswith("/volcano/values.yaml") for n in names) and any("/workloads/" in n for n in names)
    assert not any(n.endswith("/hami/values.yaml") for n in names)


def test_architect_uploads_a_cluster_snapshot_and_the_stack_runs_on_its_shape(page, worker_factory):
    make_user("arch", "architect")
    login(page, "arch")
    compose_and_save(page, "mixed")
    upload = page.locator("#cluster-upload")
    upload.get_by_label("kubectl get nodes -o json").set_input_files(str(SAMPLE / "nodes.json"))
    upload.get_by_label("kubectl get pods -A -o json").set_input_files(str(SAMPLE / "pods.json"))
    upload.get_by_label(re.compile("Kueue or Volcano queues")).set_input_files(str(SAMPLE / "queues.json"))
    upload.get_by_role("button", name="Import cluster and run").click()
    page.wait_for_url(re.compile(r"/runs/\d+/$"))
    worker_factory("browser-cluster")
    status = page.locator("#run-progress [data-status]")
    expect(page.locator(".chart.js-plotly-plot").first).to_be_visible(timeout=60_000)
    expect(status).to_have_attribute("data-status", "succeeded")
    run = SimulationRun.objects.get()
    assert run.scenario_name == "imported-cluster"
    assert {g["name"] for g in run.scenario["pool"]["node_groups"]} == {
        "a100-sxm4-80gb-8g", "a100-sxm4-80gb-8g-all-2g-20gb", "a100-pcie-40gb-4g-hami"}


def test_deploy_page_keeps_long_manifest_lines_inside_the_page_at_desktop_width(page):
    """The README's `kubectl label ...` line is wider than 1440 px: it scrolls inside its preview
    instead of making the whole page scroll sideways."""
    make_user("arch", "architect")
    login(page, "arch")
    page.set_viewport_size({"width": 1440, "height": 900})
    compose_and_save(page, "training")
    page.get_by_role("link", name=re.compile("Deploy: the Kubernetes objects")).click()
    page.wait_for_url(re.compile(r"/stacks/\d+/deploy/$"))
    expect(page.locator("section.file-preview pre").first).to_contain_text("kubectl label")
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
