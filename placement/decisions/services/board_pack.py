"""A decision record as one page for the board: HTML, Markdown and PDF from one selector.

The PDF is the HTML page printed by headless Chromium (`ATLAS_CHROMIUM`): the same page a person
prints from the browser, charts included (they are static SVG, no JavaScript)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from django.conf import settings
from django.template.loader import render_to_string

from placement.decisions.models import DecisionRecord
from placement.decisions.selectors.decisions import board_pack


class PdfUnavailable(Exception):
    """No Chromium to print with, or it failed: the message says which, for a 503."""


_CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-pdf-header-footer", "--run-all-compositor-stages-before-draw",
)


def pack_html(record: DecisionRecord, request=None) -> str:
    return render_to_string("placement/board_pack.html", {"pack": board_pack(record)}, request=request)


def pack_markdown(record: DecisionRecord) -> str:
    return render_to_string("placement/board_pack.md", {"pack": board_pack(record)})


def pack_pdf(record: DecisionRecord) -> bytes:
    chromium = settings.ATLAS_CHROMIUM
    if not shutil.which(chromium):
        raise PdfUnavailable(f"PDF export needs headless Chromium at {chromium} (setting ATLAS_CHROMIUM); the HTML and Markdown packs work without it.")
    with tempfile.TemporaryDirectory(prefix="atlas-pack-") as tmp:
        page, out = Path(tmp) / "pack.html", Path(tmp) / "pack.pdf"
        page.write_text(pack_html(record), encoding="utf-8")
        command = [chromium, *_CHROMIUM_FLAGS, f"--user-data-dir={tmp}/profile", f"--print-to-pdf={out}", page.as_uri()]
        try:
            subprocess.run(command, capture_output=True, timeout=settings.ATLAS_PDF_TIMEOUT, check=False, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise PdfUnavailable(f"Chromium did not print the pack within {settings.ATLAS_PDF_TIMEOUT:g} s.") from None
        if not out.exists() or out.stat().st_size == 0:
            raise PdfUnavailable("Chromium did not produce a PDF; the HTML pack can be printed from the browser.")
        return out.read_bytes()
