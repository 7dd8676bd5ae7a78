"""Test settings for the mutation run of the Django services (tools/mutation_services.py): the
usual settings with the MD5 password hasher, as tests/api/conftest.py already sets per test.
Every mutant runs its tests again, and PBKDF2 at full strength is most of a review test's time."""

from config.settings import *  # noqa: F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
