"""Write grants of API tokens."""

from django.conf import settings
from django.db import models


class ApiAccess(models.Model):
    """API tokens are read-only unless an admin grants writing to the token."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_access")
    token_can_write = models.BooleanField(default=False)
    granted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    granted_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"API access of {self.user.username}: {'write' if self.token_can_write else 'read-only'}"


