"""API bodies of tokens and their grants."""

from __future__ import annotations

from rest_framework import serializers


class TokenSerializer(serializers.Serializer):
    username = serializers.CharField()
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`. Shown once; POST again to rotate.")
    created = serializers.DateTimeField()
    can_write = serializers.BooleanField(help_text="False: the token may only read (GET, compare, compose).")


class TokenStatusSerializer(serializers.Serializer):
    username = serializers.CharField()
    has_token = serializers.BooleanField()
    created = serializers.DateTimeField(allow_null=True)
    can_write = serializers.BooleanField()


class TokenGrantSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    can_write = serializers.BooleanField()


class TokenGrantResultSerializer(serializers.Serializer):
    username = serializers.CharField()
    can_write = serializers.BooleanField()
    granted_by = serializers.CharField(allow_null=True)
    granted_at = serializers.DateTimeField(allow_null=True)
