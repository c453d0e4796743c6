"""Components constructed directly under the offline engine's mocks, with inputs a test chooses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from offline.engine import Recording, Secret, _mocks_and_monitor


def record_components(build: Callable[[], Any], stack: str = "components",
                      into: Recording | None = None) -> tuple[Recording, Any]:
    """Run `build` (it constructs components directly, with inputs a test chooses) under the same mocks and
    recording monitor as a stack; what it registered, and what it returned with every Output resolved to
    `Secret(value)` or its plain value (so a test sees what a component does with, say, a plain-text input).
    `into` receives the registrations even when `build` raises."""
    import pulumi

    recording = into if into is not None else Recording(stack)
    mocks, monitor = _mocks_and_monitor(recording)
    pulumi.runtime.set_mocks(mocks, project="components", stack=stack, monitor=monitor)
    pulumi.runtime.set_all_config({}, [])
    result: list[Any] = []

    async def resolve(value: Any) -> Any:
        if isinstance(value, pulumi.Output):
            plain = await value.future()
            return Secret(plain) if await value.is_secret() else plain
        if isinstance(value, dict):
            return {k: await resolve(v) for k, v in value.items()}
        return value

    @pulumi.runtime.test
    async def run() -> None:
        result.append(await resolve(build()))

    run()
    return recording, result[0]
