"""Maps, layers, capabilities (vocabulary, seeded from fixtures) and projects with their placement.

The placement body is stored as JSON validated by `placement.catalog.schemas.Placement`; the columns and the
facet table beside it exist only so that lists can be filtered with indexed queries.
"""

from django.conf import settings
from django.db import models

from placement.catalog.schemas import Kind


class Map(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField()
    order = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["order", "slug"]

    def __str__(self) -> str:
        return self.name


class Layer(models.Model):
    map = models.ForeignKey(Map, on_delete=models.CASCADE, related_name="layers")
    code = models.CharField(max_length=40)
    name = models.CharField(max_length=200)
    description = models.TextField()
    order = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["map__order", "order"]
        constraints = [models.UniqueConstraint(fields=["map", "code"], name="layer_code_unique_per_map")]

    def __str__(self) -> str:
        return f"{self.code} {self.name}"


class Capability(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    owner_map = models.SlugField()
    owner_layers = models.JSONField(default=list)
    owner_plane = models.CharField(max_length=40)
    description = models.TextField()
    order = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["order", "slug"]
        verbose_name_plural = "capabilities"

    def __str__(self) -> str:
        return self.name


class Project(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=300)
    kind = models.CharField(max_length=20, choices=[(k.value, k.value) for k in Kind])
    homepage = models.URLField(max_length=500)
    summary = models.TextField()
    # The accepted one-page template (placement.catalog.schemas.Placement as JSON).
    placement = models.JSONField()
    # Number of accepted revisions; proposals remember the version they started from. A project
    # proposed but never accepted has version 0 and stays off the map and the lists.
    version = models.PositiveIntegerField(default=0)
    accepted = models.BooleanField(default=False, db_index=True)
    # Lower-cased text for free-text search, rebuilt from the document on every save.
    search_text = models.TextField(blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ProjectLayer(models.Model):
    """Where a project sits on each map: one primary per map, any number of secondary layers."""

    PRIMARY = "primary"
    SECONDARY = "secondary"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="layer_links")
    layer = models.ForeignKey(Layer, on_delete=models.CASCADE, related_name="project_links")
    role = models.CharField(max_length=10, choices=[(PRIMARY, "primary"), (SECONDARY, "secondary")])

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "layer"], name="project_layer_unique")]
        indexes = [models.Index(fields=["layer", "role"])]


class ProjectFacet(models.Model):
    """Denormalised filter values of the placement (unit, enforcement point, capability)."""

    UNIT = "unit"
    ENFORCEMENT = "enforcement"
    CAPABILITY = "capability"
    CNCF = "cncf"  # landscape CNCF status
    STATUS = "status"  # "archived" when the landscape metadata says so, else "active"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="facets")
    facet = models.CharField(max_length=20)
    value = models.CharField(max_length=80)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "facet", "value"], name="project_facet_unique")]
        indexes = [models.Index(fields=["facet", "value"])]


class CatalogVersion(models.Model):
    """One row: a number that moves whenever the accepted catalog does (a proposal accepted, a
    catalog imported; `placement.catalog.services.catalog.catalog_changed`). Pages and API payloads built
    from the catalog are cached and answered with 304 per version (`placement.catalog.page_cache`)."""

    value = models.PositiveBigIntegerField(default=0)
    changed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"catalog version {self.value}"
