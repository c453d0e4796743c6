"""What a stack's config refers to that the real engine must be given: the `secrets:` keys (the program refuses
an unset or plain-text one, as it would on a user's machine), read through the same config model the program uses."""

from __future__ import annotations

from realengine.toolchain import ROOT


def secret_keys(stack: str) -> list[str]:
    from stackconfig import check_stack, secret_config_keys

    return secret_config_keys(check_stack(ROOT, stack))
