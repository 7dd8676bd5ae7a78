"""The Django admin for staff. Projects and revisions are read-only here: every change to a
placement goes through a proposal and a review, so the admin cannot bypass the review board."""

from django.contrib import admin
from django.db import models

from placement.catalog.models import Capability, Layer, Map, Project
from placement.review.models import Revision


class ReadOnlyAdmin(admin.ModelAdmin):
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class SuperuserOnlyWrites(admin.ModelAdmin):
    """Vocabulary (maps, layers, capabilities) may be extended by admins only."""

    def has_add_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_change_permission(self, request, obj=None):
        return request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser


class LayerInline(admin.TabularInline):
    model = Layer
    extra = 0


@admin.register(Map)
class MapAdmin(SuperuserOnlyWrites):
    list_display = ["slug", "name", "order"]
    inlines = [LayerInline]


@admin.register(Capability)
class CapabilityAdmin(SuperuserOnlyWrites):
    list_display = ["slug", "name", "owner_map", "owner_plane"]
    search_fields = ["slug", "name"]


@admin.register(Project)
class ProjectAdmin(ReadOnlyAdmin):
    list_display = ["slug", "name", "kind", "accepted", "version", "updated_at"]
    list_filter = ["kind", "accepted"]
    search_fields = ["slug", "name", "summary"]


@admin.register(Revision)
class RevisionAdmin(ReadOnlyAdmin):
    list_display = ["project", "number", "status", "author", "reviewer", "created_at"]
    list_filter = ["status"]
    search_fields = ["project__slug", "reason"]


# --- decisions and webhooks ---------------------------------------------------------------------
# Decision records change only through their review (placement.decisions.services.decisions); webhooks are
# the admins' to manage, and their delivery log is read-only.
from placement.decisions.models import DecisionRecord, Webhook, WebhookDelivery  # noqa: E402


@admin.register(DecisionRecord)
class DecisionRecordAdmin(ReadOnlyAdmin):
    list_display = ["pk", "title", "status", "author", "reviewer", "decided_at"]
    list_filter = ["status"]


@admin.register(Webhook)
class WebhookAdmin(SuperuserOnlyWrites):
    list_display = ["name", "url", "events", "active", "created_at"]
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    list_display = ["pk", "webhook", "event", "status", "attempts", "response_code", "last_error", "created_at"]
    list_filter = ["status", "event"]
