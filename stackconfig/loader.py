"""From a stack's config to a `StackConfig`, or one `ConfigError` that lists every problem at once.

`load_stack_config` takes the project's keys (without `<project>:`): every value is checked by its type
(stackconfig/values.py), and the rules across keys (stackconfig/rules/) run on everything that was valid.
`check_config` takes every `<namespace>:<key>` of a stack, as the engine hands them to `__main__.py`, and adds the
namespaces nobody reads; `check_stack` reads `Pulumi.<stack>.yaml` itself (stackconfig/stackfile.py), as
`python -m stackconfig` and the offline tools do. All three refuse the same mistakes with the same messages.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from stackconfig.errors import ConfigError, Problem, clean_loc, from_validation_error, key_path, key_pattern
from stackconfig.reads import Reads, reading
from stackconfig.rules import RULES
from stackconfig.secrets import plain_text_problems, unset_problems
from stackconfig.stack import KNOWN_KEYS, REQUIRED_KEYS, StackConfig, secret_config_keys
from stackconfig.stackfile import KNOWN_NAMESPACES, full_key, namespace_problems, read_stack

# --- type errors and cross-key rules in one run ----------------------------------------------------------------


def _at(data: Any, loc: tuple[str | int, ...]) -> Any:
    """The value at `loc` in nested dicts/lists, or None when it is not there."""
    node = data
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def _drop(data: Any, loc: tuple[str | int, ...]) -> bool:
    """Delete the value at `loc`; False if it is not there."""
    try:
        del _at(data, loc[:-1])[loc[-1]]
    except (KeyError, IndexError, TypeError):
        return False
    return True


def _validate_what_validates(
    raw: dict[str, Any],
) -> tuple[list[Problem], StackConfig | None, dict[str, list[int]], set[str]]:
    """Validate; on errors, drop each bad value (its default applies) and validate again, so that the cross-key
    rules still run on everything that was valid. A required value that is bad or missing drops its list item (a
    workload); outside a list nothing can stand in for it, and the rules are skipped (None).

    Returns the type problems, the config (or None), per list with dropped items the stack-file indexes of the
    items kept, and the key paths that were dropped (rule problems about those would only be about defaults).
    """
    data = copy.deepcopy(raw)
    dropped: set[str] = set()
    kept: dict[str, list[int]] = {}
    try:
        return [], StackConfig.model_validate(data), kept, dropped
    except ValidationError as exc:
        problems = from_validation_error(exc, KNOWN_KEYS, required_keys=REQUIRED_KEYS)
        errors = exc.errors()
    values: set[tuple[str | int, ...]] = set()
    items: set[tuple[str | int, ...]] = set()
    for err in errors:
        if err["type"] == "default_factory_not_called":  # goes with another key's error, dropped below
            continue
        loc = clean_loc(err["loc"])
        if err["type"] == "missing" or loc and loc[-1] in REQUIRED_KEYS.get(key_pattern(loc[:-1]), ()):
            index = max((i for i, p in enumerate(loc) if isinstance(p, int)), default=None)
            if index is None:  # a required value outside any list: nothing can stand in for it
                return problems, None, kept, dropped
            loc = loc[: index + 1]  # the list item holding it
        if loc and isinstance(loc[-1], int) and not isinstance(_at(data, loc), dict):
            # An item of a list of plain values (command, args, a [low, high] range), or one that is not
            # there at all: the list itself is the bad value.
            loc = loc[: max(i for i, p in enumerate(loc) if not isinstance(p, int)) + 1]
        if loc:
            (items if isinstance(loc[-1], int) else values).add(loc)
    for loc in values:  # dict keys: deleting one does not move any other
        if _drop(data, loc):
            dropped.add(key_path(loc))
    for loc in sorted(items, key=lambda t: tuple(str(p).zfill(8) for p in t), reverse=True):
        parent = _at(data, loc[:-1])
        if not isinstance(parent, list):  # the whole list was dropped above (an item that is no mapping)
            continue
        section = key_path(loc[:-1])
        kept.setdefault(section, list(range(len(parent))))
        dropped.add(_original_key(key_path(loc), kept))
        del kept[section][int(loc[-1])]
        del parent[int(loc[-1])]
    try:
        return problems, StackConfig.model_validate(data), kept, dropped
    except ValidationError:  # not expected: every bad value is gone; the type problems stand alone
        return problems, None, kept, dropped


def _original_key(key: str, kept: dict[str, list[int]]) -> str:
    """A key path into the pruned lists, with each list index as it stands in the stack file."""
    for section, indexes in kept.items():
        match = re.match(rf"^{re.escape(section)}\[(\d+)\]", key)
        if match and int(match.group(1)) < len(indexes):
            key = f"{section}[{indexes[int(match.group(1))]}]" + key[match.end():]
    return key


def load_stack_config(raw: Mapping[str, Any]) -> StackConfig:
    """Validate the project's structured config (keys without the `<project>:` prefix)."""
    problems, cfg, kept, dropped = _validate_what_validates(dict(raw))
    if cfg is not None:
        for rule in RULES:
            seen = Reads()
            found = rule(reading(cfg, seen))
            # What the rule read, with each list index as it stands in the stack file.
            seen = Reads({_original_key(r, kept) for r in seen.values}, {_original_key(r, kept) for r in seen.lists})
            for problem in found:
                key = _original_key(problem.key, kept)
                if not any(seen.touches(d, key) for d in dropped):
                    problems.append(Problem(key, problem.value, problem.message, problem.fix))
    if problems:
        raise ConfigError(problems)
    assert cfg is not None
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
