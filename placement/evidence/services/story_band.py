"""The run page's verdicts over seeds and their sensitivity band, computed in a Celery task.

A band is ~60 short simulations (10-25 s), too long for a web request: the page asks
`story_bands_requested`, which answers at once from the StoryBand rows and queues (once per band,
deduplicated by the row's unique key and a conditional claim) the task that fills them."""

from __future__ import annotations

import hashlib
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from placement.catalog.selectors.scenarios import SCENARIO_DIR
from placement.common.queue import QueueUnavailable, publish, task
from placement.evidence.models import StoryBand
from scheduler_core.stories import VERDICTS, Verdict, judge, summary, verdicts_for

KEEP_FOR = timedelta(hours=24)  # as long as the former cache entry
RETRY_FAILED_AFTER = timedelta(minutes=5)


def _time_limit() -> int:
    return settings.ATLAS_BAND_TIME_LIMIT


def _key(v: Verdict) -> str:
    texts = [(SCENARIO_DIR / f"{stem}.yaml").read_bytes() for stem in (v.naive, v.right)]
    return "v1:" + hashlib.sha256(b"\0".join(texts) + v.metric.encode()).hexdigest()[:40]


def _due(band: StoryBand) -> bool:
    """A band to (re)compute: expired, failed a while ago, or computing longer than its hard limit
    allows (its worker was lost)."""
    age = timezone.now() - band.updated_at
    if band.status == StoryBand.DONE:
        return age > KEEP_FOR
    if band.status == StoryBand.FAILED:
        return age > RETRY_FAILED_AFTER
    return age > timedelta(seconds=_time_limit() + 60)


def story_bands_requested(scenario_name: str) -> list[StoryBand]:
    """The bands of the verdicts this scenario takes part in, queueing those not ready. Never
    simulates in the caller's process unless Celery is eager (tests, no broker)."""
    bands = []
    for v in verdicts_for(scenario_name):
        band, created = StoryBand.objects.get_or_create(key=_key(v), defaults={"story": v.story})
        claimed = created
        if not created and _due(band):
            # Conditional update: of two page loads that both see a stale band, one claims it.
            claimed = StoryBand.objects.filter(pk=band.pk, updated_at=band.updated_at).update(
                status=StoryBand.COMPUTING, error="", updated_at=timezone.now()) == 1
        if claimed:
            _queue(band.pk)
        band.refresh_from_db()
        bands.append(band)
    return bands


def _queue(band_id: int) -> None:
    compute_story_band = task("placement.compute_story_band")
    try:
        publish(lambda producer: compute_story_band.apply_async(
            args=[band_id], producer=producer, retry=False,
            soft_time_limit=_time_limit(), time_limit=_time_limit() + 30))
    except QueueUnavailable as exc:
        story_band_failed(band_id, str(exc))


def _verdict_of(band: StoryBand, scenario_key: str) -> Verdict:
    for v in VERDICTS:
        if v.story == band.story and _key(v) == scenario_key:
            return v
    raise LookupError(f"no built-in story '{band.story}' matches these scenario files any more")


def story_band_compute(band_id: int) -> str:
    """Run the ~60 simulations of one band (in the worker) and store the result or the reason."""
    band = StoryBand.objects.filter(pk=band_id).first()
    if band is None or band.status != StoryBand.COMPUTING:
        return "skipped"
    try:
        found = summary(judge(_verdict_of(band, band.key), n_seeds=10))
    except Exception as exc:  # SoftTimeLimitExceeded included: the page shows why
        from celery.exceptions import SoftTimeLimitExceeded

        reason = (f"stopped at its time limit of {_time_limit()} s (ATLAS_BAND_TIME_LIMIT)"
                  if isinstance(exc, SoftTimeLimitExceeded) else f"{type(exc).__name__}: {exc}")
        story_band_failed(band_id, reason)
        return "failed"
    StoryBand.objects.filter(pk=band_id).update(status=StoryBand.DONE, summary=found, error="", updated_at=timezone.now())
    return "done"


def story_band_failed(band_id: int, reason: str) -> None:
    StoryBand.objects.filter(pk=band_id).update(status=StoryBand.FAILED, error=reason, updated_at=timezone.now())
