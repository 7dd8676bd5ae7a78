from rest_framework.authentication import TokenAuthentication
from rest_framework.permissions import SAFE_METHODS, BasePermission

from placement.access.models import ApiAccess
from placement.access.services import can

READ_ONLY_TOKEN = (
    "This API token is read-only. An admin can grant it writing (POST /api/v1/tokens/grants/)."
)


def token_can_write(user) -> bool:
    return ApiAccess.objects.filter(user=user, token_can_write=True).exists()


class AtlasApiPermission(BasePermission):
    """Reads follow the Atlas read rule; writes need an authenticated user (services check roles).

    A token is read-only unless `ApiAccess(user, token_can_write=True)` was granted by an
    admin: a leaked token cannot change the catalog. Views that answer a POST without writing
    anything (compare, compose) set `read_only_post = True` and are reads for this rule.
    """

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS or getattr(view, "read_only_post", False):
            return can(request.user, "read")
        if not (request.user and request.user.is_authenticated):
            return False
        if isinstance(request.successful_authenticator, TokenAuthentication) and not token_can_write(request.user):
            self.message = READ_ONLY_TOKEN
            return False
        return True
