"""From a stack's config to a `StackConfig`, or one `ConfigError` that lists every problem at once.

`load_stack_config` takes the project's keys (without `<project>:`): every value is checked by its type
(stackconfig/values.py), then, when all are valid, the rules across keys (stackconfig/rules/).
`check_config` takes every `<namespace>:<key>` of a stack, as the engine hands them to `__main__.py`, and adds the
namespaces nobody reads; `check_stack` reads `Pulumi.<stack>.yaml` itself (stackconfig/stackfile.py), as
`python -m stackconfig` and the offline tools do. All three refuse the same mistakes with the same messages.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from stackconfig.errors import ConfigError, Problem, from_validation_error
from stackconfig.rules import RULES
from stackconfig.secrets import plain_text_problems, unset_problems
from stackconfig.stack import KNOWN_KEYS, REQUIRED_KEYS, StackConfig, secret_config_keys
from stackconfig.stackfile import KNOWN_NAMESPACES, full_key, namespace_problems, read_stack


def load_stack_config(raw: Mapping[str, Any]) -> StackConfig:
    """Validate the project's structured config (keys without the `<project>:` prefix): every value by its type,
    then, when all are valid, the rules across keys. A rule run on a bad value's default would report a problem the
    stack file does not have (`gpuPool.maxNodes: abc` failing the packing rule at the default 2), so the type
    problems come alone, all at once."""
    try:
        cfg = StackConfig.model_validate(dict(raw))
    except ValidationError as exc:
        raise ConfigError(from_validation_error(exc, KNOWN_KEYS, required_keys=REQUIRED_KEYS)) from None
    problems = [problem for rule in RULES for problem in rule(cfg)]
    if problems:
        raise ConfigError(problems)
    return cfg


# --- a whole stack's config ---------------------------------------------------------------------------------


def decode(value: Any) -> Any:
    """The engine passes structured config as JSON text; plain strings stay strings."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def check_config(
    config: Mapping[str, Any],
    project: str,
    where: Mapping[str, str] | None = None,
    file_problems: Sequence[Problem] = (),
    secret_keys: Collection[str] | None = None,
    require_secrets: bool = False,
) -> StackConfig:
    """Validate every `<namespace>:<key>` of a stack (values decoded); ConfigError lists every problem at once,
    after `file_problems` (what the stack file itself has wrong around its config, stackconfig/stackfile.py).

    With `secret_keys` (the full keys marked secret), a `secrets:` key or Gcore credential in plain text is refused;
    with `require_secrets` too, so is every `secrets:<key>` the stack refers to but does not set
    (stackconfig/secrets.py): what `pulumi up` needs, checked before anything is registered.
    """
    config = {full_key(k, project): v for k, v in config.items()}
    problems: list[Problem] = [*file_problems, *namespace_problems(config, project, where)]
    if secret_keys is not None:
        problems += plain_text_problems(config, {full_key(k, project) for k in secret_keys})
    prefix = f"{project}:"
    own = {k.removeprefix(prefix): decode(v) for k, v in config.items() if k.startswith(prefix)}
    if any(key in own for key in (project, *KNOWN_NAMESPACES)):  # nested under a namespace: reported above
        raise ConfigError(problems)
    try:
        cfg = load_stack_config(own)
    except ConfigError as exc:
        problems += exc.problems
    else:
        if require_secrets:
            problems += unset_problems(secret_config_keys(cfg), config)
    if problems:
        raise ConfigError(problems)
    return cfg


def check_stack(project_dir: Path, stack: str, require_secrets: bool = False) -> StackConfig:
    """Check `Pulumi.<stack>.yaml` as `pulumi up` would see it (secure values stand in as placeholders).

    Plain-text secrets are always refused; with `require_secrets`, so is every `secrets:` key the stack refers to
    that the file does not set, unless the file imports an ESC environment (which may set it).
    """
    source = read_stack(project_dir, stack)
    return check_config(source.config(), source.project, source.positions(), source.file.problems,
                        secret_keys=source.secret_keys(),
                        require_secrets=require_secrets and not source.file.imports_environment)
