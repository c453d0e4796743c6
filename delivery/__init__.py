"""Delivery tooling that runs in CI around `pulumi preview` / `pulumi up` (not part of the Pulumi program)."""

import toolenv  # noqa: F401  (first: outside .venv, a missing requirement is one line saying how to enter it)
