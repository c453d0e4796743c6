"""Delivery tooling that runs in CI around `pulumi preview` / `pulumi up` (not part of the Pulumi program)."""
