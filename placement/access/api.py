"""API tokens: one per user, read-only unless an admin grants writing.

A token is created or rotated only from a logged-in session, so a leaked token cannot renew
itself. The grant is a write, checked like every other one with `services.access.require`.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from placement.access.permissions import AtlasApiPermission, token_can_write
from placement.access.serializers import (
    TokenGrantResultSerializer,
    TokenGrantSerializer,
    TokenSerializer,
    TokenStatusSerializer,
)
from placement.access.services import token_grant, token_rotate
from placement.common.api import AtlasViewMixin


class TokenView(AtlasViewMixin, generics.GenericAPIView):
    serializer_class = TokenSerializer
    filter_backends: list = []
    pagination_class = None
    permission_classes = [IsAuthenticated, AtlasApiPermission]

    def get_authenticators(self):
        # Creating or rotating needs the session of a logged-in user; reading the status does not.
        if getattr(getattr(self, "request", None), "method", None) == "POST":
            return [SessionAuthentication()]
        return super().get_authenticators()

    @extend_schema(
        request=None,
        responses={201: TokenSerializer},
        auth=[{"cookieAuth": []}],
        description="Create or rotate the logged-in user's token (session login and CSRF token required). "
        "The key is shown only in this response.",
    )
    def post(self, request):
        token = token_rotate(user=request.user)
        data = {"username": request.user.username, "token": token.key, "created": token.created, "can_write": token_can_write(request.user)}
        return Response(TokenSerializer(data).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses=TokenStatusSerializer, description="Whether the caller has a token and whether it may write.")
    def get(self, request):
        token = Token.objects.filter(user=request.user).first()
        data = {
            "username": request.user.username,
            "has_token": token is not None,
            "created": token.created if token else None,
            "can_write": token_can_write(request.user),
        }
        return Response(TokenStatusSerializer(data).data)


@extend_schema(
    request=TokenGrantSerializer,
    responses={200: TokenGrantResultSerializer},
    description="Grant or withdraw writing for another user's token (admins only; nobody grants their own). "
    "Every grant is in the audit history. Roles still apply: a reader's token cannot propose even with the grant.",
)
class TokenGrantView(AtlasViewMixin, generics.GenericAPIView):
    serializer_class = TokenGrantSerializer
    filter_backends: list = []
    pagination_class = None

    def post(self, request):
        body = TokenGrantSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        access = token_grant(user=request.user, **body.validated_data)
        data = {
            "username": access.user.username,
            "can_write": access.token_can_write,
            "granted_by": access.granted_by.username if access.granted_by else None,
            "granted_at": access.granted_at,
        }
        return Response(TokenGrantResultSerializer(data).data)
