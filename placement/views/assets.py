"""JavaScript shipped inside Python packages, served from the app itself (no CDN, no network)."""

from pathlib import Path

import plotly
from django.http import FileResponse, Http404
from django.views.decorators.cache import cache_control

_ASSETS = {
    "plotly.min.js": Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js",
}


@cache_control(max_age=86400, public=True)
def vendored_asset(request, name: str):
    path = _ASSETS.get(name)
    if path is None or not path.exists():
        raise Http404(name)
    return FileResponse(path.open("rb"), content_type="text/javascript")
