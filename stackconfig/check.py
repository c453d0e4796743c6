"""One check of a stack's whole config: namespaces, keys, types, units and cross-key rules, reported together.

Shared by `__main__.py` (on the config the engine hands the program), `offline/engine.py` and
`python -m stackconfig <stack>` (on the stack file itself), so all three refuse the same mistakes the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from stackconfig.errors import ConfigError, Problem
from stackconfig.model import StackConfig, load_stack_config
from stackconfig.stackfile import StackFile, namespace_problems, read_stack_file

#: What `python -m stackconfig` puts in place of a `secure:` value it cannot decrypt.
SECRET_PLACEHOLDER = "offline-placeholder-secret"


def decode(value: Any) -> Any:
    """The engine passes structured config as JSON text; plain strings stay strings."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def full_key(key: str, project: str) -> str:
    """A stack-file key without a namespace belongs to the project (the Pulumi CLI's rule)."""
    return key if ":" in key else f"{project}:{key}"


def check_config(config: Mapping[str, Any], project: str, where: Mapping[str, str] | None = None) -> StackConfig:
    """Validate every `<namespace>:<key>` of a stack (values decoded); ConfigError lists every problem at once."""
    config = {full_key(k, project): v for k, v in config.items()}
    problems: list[Problem] = namespace_problems(config, project, where)
    prefix = f"{project}:"
    own = {k.removeprefix(prefix): decode(v) for k, v in config.items() if k.startswith(prefix)}
    try:
        cfg = load_stack_config(own)
    except ConfigError as exc:
        problems += exc.problems
    if problems:
        raise ConfigError(problems)
    return cfg


def project_name(project_dir: Path) -> str:
    """The `name:` of the project's Pulumi.yaml (ConfigError when it has none)."""
    data = YAML(typ="safe", pure=True).load((project_dir / "Pulumi.yaml").read_text(encoding="utf-8"))
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name:
        raise ConfigError([Problem(str(project_dir / "Pulumi.yaml"), name, "has no project `name:`",
                                   "give --dir a Pulumi project folder (its Pulumi.yaml names the project)")])
    return name


def stack_file(project_dir: Path, stack: str) -> StackFile:
    """`Pulumi.<stack>.yaml` read strictly (StackFileError with file:line:column on bad YAML)."""
    return read_stack_file(project_dir / f"Pulumi.{stack}.yaml")


def check_stack(project_dir: Path, stack: str) -> StackConfig:
    """Check `Pulumi.<stack>.yaml` as `pulumi up` would see it (secure values stand in as placeholders)."""
    project = project_name(project_dir)
    sf = stack_file(project_dir, stack)
    config = {k: (SECRET_PLACEHOLDER if k in sf.secure_keys else v) for k, v in sf.config.items()}
    where = {full_key(k, project): sf.where(k) for k in sf.config}
    return check_config(config, project, where)
