"""Where a recorded resource's inputs hold secret values and where they hold plain text, for the tests that follow a
secret from the stack file or a component argument to the resources."""

from __future__ import annotations

from typing import Any

from offline.engine import Secret


def plain_strings(value: Any) -> list[str]:
    """Every string in `value` outside Secret(...) wrappers, keys included."""
    if isinstance(value, Secret):
        return []
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [str(k), *plain_strings(v)]]
    if isinstance(value, list | tuple):
        return [s for v in value for s in plain_strings(v)]
    return [value] if isinstance(value, str) else []


def secrets_in(value: Any) -> list[Any]:
    """The values in `value` wrapped as Secret(...), in order."""
    if isinstance(value, Secret):
        return [value.value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in secrets_in(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in secrets_in(v)]
    return []
