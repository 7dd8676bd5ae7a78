from rest_framework.permissions import SAFE_METHODS, BasePermission

from placement.services.access import can


class AtlasApiPermission(BasePermission):
    """Reads follow the Atlas read rule; writes need an authenticated user (services check roles).

    A token is read-only unless its user holds a writing role (granted by a reviewer or admin).
    """

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS or getattr(view, "read_only_post", False):
            return can(request.user, "read")
        return bool(request.user and request.user.is_authenticated)
