"""A decision record as one page for the board: its decision, options, evidence (with a chart that
prints), rings and the catalog facts it relied on, as HTML, Markdown and PDF."""

import shutil
import subprocess

import pytest

from placement.catalog.models import Project
from tests.decisions.test_decision_records import _propose

pytestmark = pytest.mark.django_db


@pytest.fixture
def record(stacks, architect, reviewer, finished_run):
    from placement.decisions.services import decisions as services

    finished_run.stack = stacks[0]
    finished_run.save(update_fields=["stack"])
    return services.decision_accept(_propose(stacks, architect, evidence_runs=[finished_run.pk]), user=reviewer)


def test_the_pack_page_shows_decision_options_chart_rings_and_facts(client, record, finished_run):
    html = client.get(f"/decisions/{record.pk}/pack/").content.decode()
    assert f"ADR-{record.pk}: {record.title}" in html
    assert 'Chosen: <span class="chosen">Whole GPUs + Kueue</span>' in html and "HAMi shares" in html
    assert '<svg viewBox="0 0 620' in html and f"run {finished_run.pk}: Whole GPUs + Kueue (chosen)" in html
    assert "Utilisation · GPUs allocated" in html
    assert "<strong>Kueue</strong>: Adopt" in html, "a ring names its project, not its slug"
    assert "(chosen): " in html and "nvidia-device-plugin" not in html.split("<h2>Options considered</h2>", 1)[1].split("<h2>", 1)[0]
    kueue = Project.objects.get(slug="kueue")
    assert f"Kueue (v{kueue.version})" in html
    assert "<script" not in html.replace('onclick="window.print()"', ""), "the pack prints without JavaScript"


def test_the_markdown_pack_is_a_document_with_tables_that_hold(client, record):
    response = client.get(f"/decisions/{record.pk}/pack.md")
    assert response["Content-Type"].startswith("text/markdown")
    text = response.content.decode()
    assert text.startswith(f"# ADR-{record.pk}: {record.title}")
    assert "Chosen: **Whole GPUs + Kueue**" in text and "## Options considered" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "(v" in line]
    assert rows and all(line.count(" | ") == 3 for line in rows), "every fact row keeps its four cells"


@pytest.mark.skipif(not shutil.which("pdftotext"), reason="make test installs poppler-utils (tools/test_services.sh)")
def test_the_pdf_pack_first_page_shows_the_decision_its_options_and_the_chart(client, record, tmp_path):
    response = client.get(f"/decisions/{record.pk}/pack.pdf")
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"] == "application/pdf" and response.content.startswith(b"%PDF")
    pdf = tmp_path / "pack.pdf"
    pdf.write_bytes(response.content)
    first = subprocess.run(["pdftotext", "-f", "1", "-l", "1", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    assert f"ADR-{record.pk}: {record.title}" in first
    assert "Chosen: Whole GPUs + Kueue" in first and "HAMi shares" in first
    assert "Share of the pool" in first and "GPUs allocated" in first  # the chart's text, drawn on page one


def test_without_chromium_the_pdf_answers_503_naming_the_setting(client, record, settings):
    settings.ATLAS_CHROMIUM = "/nonexistent/chromium"
    response = client.get(f"/decisions/{record.pk}/pack.pdf")
    assert response.status_code == 503 and "ATLAS_CHROMIUM" in response.content.decode()
