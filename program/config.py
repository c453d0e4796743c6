"""The stack's config and secrets, read from the Pulumi engine and checked before any resource is registered.

The stack file beside the program is read strictly first (a duplicate key or a tab is refused with its position,
which the engine's own parse would hide), then every config key the engine passes is checked by stackconfig;
secrets are taken only from `secrets:` keys set with `--secret`. Any problem raises one `InvalidStackConfig`
listing them all.
"""

from __future__ import annotations

from pathlib import Path

import pulumi

from stackconfig import ConfigError, StackConfig, check_config
from stackconfig.stackfile import read_stack_file
from stacknames import SECRETS_NAMESPACE


class InvalidStackConfig(ConfigError, pulumi.RunError):
    """A RunError, so that `pulumi up` prints the problems without a traceback: the Python language host logs a
    RunError's message alone (pulumi/pulumi, sdk/python/cmd/pulumi-language-python-exec)."""


def stack_config(project_dir: Path) -> StackConfig:
    """The stack file's YAML (duplicate keys, tabs, its shape) when it is beside the program, then every config key,
    and the secrets the stack refers to (set, and set with `--secret`): every problem in one InvalidStackConfig.

    Every key, and which were set with `--secret` (Pulumi marks no other key secret), as the language host hands
    them over: pulumi-language-python puts the whole config in PULUMI_CONFIG and the secret keys in
    PULUMI_CONFIG_SECRET_KEYS (pulumi/pulumi v3.274.1 sdk/python/cmd/pulumi-language-python/main.go), which the
    SDK's public `get_config_env` and `get_config_secret_keys_env` read.
    """
    stack_file = project_dir / f"Pulumi.{pulumi.get_stack()}.yaml"
    try:
        file_problems = read_stack_file(stack_file).problems if stack_file.exists() else ()
        everything = pulumi.runtime.get_config_env()
        secret = set(pulumi.runtime.get_config_secret_keys_env()) & set(everything)
        return check_config(everything, pulumi.get_project(), file_problems=file_problems, secret_keys=secret,
                            require_secrets=True)
    except ConfigError as exc:
        raise InvalidStackConfig(exc.problems) from None


def secret_config(keys: list[str]) -> dict[str, pulumi.Output[str]]:
    """The values of `secrets:<key>` as secret Outputs (checked, set and secret, by `stack_config`)."""
    conf = pulumi.Config(SECRETS_NAMESPACE)
    return {key: conf.require_secret(key) for key in keys}
