"""Static files as deployed: `collectstatic` with WhiteNoise's compressed manifest storage gives
content-hashed names served gzip-compressed with a far-future, immutable Cache-Control; the map
loads the smallest plotly.js bundle that draws it."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.test import override_settings

pytestmark = pytest.mark.django_db

DEPLOYED = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}


@pytest.fixture
def collected(tmp_path):
    with override_settings(STORAGES=DEPLOYED, STATIC_ROOT=tmp_path, DEBUG=False):
        from django.contrib.staticfiles.storage import staticfiles_storage

        staticfiles_storage._setup()  # the lazy storage object was built for the suite's settings
        call_command("collectstatic", interactive=False, verbosity=0)
        yield tmp_path
    staticfiles_storage._setup()


def test_the_map_loads_a_hashed_compressed_plotly_bundle_cached_for_a_year(client, collected):
    html = client.get("/map/").content.decode()
    # fetched at once (preload) and run after the server-drawn first frame is painted
    scripts = re.findall(r'<link rel="preload" as="script" href="([^"]+)"', html)
    plotly = [s for s in scripts if "plotly" in s]
    assert f'plotlySrc = "{plotly[0]}"' in html
    assert plotly and re.fullmatch(r"/static/vendor/plotly/plotly-basic\.min\.[0-9a-f]{12}\.js", plotly[0]), scripts
    response = client.get(plotly[0], HTTP_ACCEPT_ENCODING="gzip")
    assert response.status_code == 200
    assert response["Content-Encoding"] == "gzip"
    assert "immutable" in response["Cache-Control"] and "max-age=315360000" in response["Cache-Control"]
    body = b"".join(response.streaming_content)
    assert len(body) < 500_000  # the full plotly.min.js is 1.5 MB even compressed
    stylesheet = re.search(r'<link rel="stylesheet" href="(/static/atlas/atlas\.[0-9a-f]{12}\.css)"', html)
    assert stylesheet, "the stylesheet is versioned too"


def test_evidence_charts_use_the_cartesian_bundle_which_draws_histograms():
    from django.template.loader import render_to_string

    html = render_to_string("placement/_charts.html", {"charts": [{"id": "c", "data_id": "c-data", "title": "t", "figure": {}}]})
    assert "vendor/plotly/plotly-cartesian.min.js" in html
