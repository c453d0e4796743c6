"""Config errors that tell the user which key is wrong, what it held and what to do."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError


@dataclass(frozen=True)
class Problem:
    key: str
    value: Any
    message: str
    fix: str

    def __str__(self) -> str:
        return f"{self.key}: {self.value!r} {self.message}. Fix: {self.fix}"


class ConfigError(ValueError):
    """Raised before any resource is registered; lists every problem found, not only the first."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"invalid stack configuration ({len(self.problems)} problem(s)):\n{lines}")


def key_path(loc: Iterable[str | int]) -> str:
    """('workloads', 0, 'gpusPerPod') -> 'workloads[0].gpusPerPod'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def from_validation_error(
    exc: ValidationError, known_keys: Mapping[str, Sequence[str]], prefix: Sequence[str | int] = ()
) -> list[Problem]:
    """Translate pydantic's errors into Problems; unknown keys get a 'did you mean' hint.

    `known_keys` maps a model path pattern (indexes replaced by '[]') to its accepted keys.
    """
    problems = []
    for err in exc.errors():
        loc = [*prefix, *err["loc"]]
        # pydantic appends the validator name for function-wrapped fields; keep only real keys.
        loc = [p for p in loc if not (isinstance(p, str) and p.startswith("function-"))]
        key = key_path(loc)
        value = err.get("input")
        if err["type"] == "extra_forbidden":
            parent = key_path(["[]" if isinstance(p, int) else p for p in loc[:-1]]).replace(".[]", "[]")
            candidates = list(known_keys.get(parent, ()))
            guess = difflib.get_close_matches(str(loc[-1]), candidates, n=1)
            hint = f"did you mean '{guess[0]}'? " if guess else ""
            problems.append(
                Problem(key, value, "is not a known key (a typo would otherwise be ignored silently)",
                        f"{hint}valid keys here: {', '.join(candidates)}")
            )
        elif err["type"] == "missing":
            problems.append(Problem(key, None, "is required but missing", f"set {key} in the stack file"))
        elif err["type"] == "invalid_value":  # our own validators (stackconfig/values.py `invalid`): our words
            problems.append(Problem(key, value, err["msg"], str((err.get("ctx") or {}).get("fix"))))
        else:
            msg = err["msg"].removeprefix("Value error, ")
            fix = (err.get("ctx") or {}).get("fix") or _generic_fix(err["type"], err.get("ctx") or {})
            problems.append(Problem(key, value, f"is invalid: {msg}", str(fix)))
    return problems


_BOUNDS = {
    "greater_than_equal": ("ge", "≥"),
    "greater_than": ("gt", ">"),
    "less_than_equal": ("le", "≤"),
    "less_than": ("lt", "<"),
}


def _generic_fix(err_type: str, ctx: dict[str, Any]) -> str:
    if err_type in _BOUNDS:
        name, sign = _BOUNDS[err_type]
        return f"use a value {sign} {ctx.get(name)}"
    if err_type in ("string_too_long", "too_long"):
        return f"shorten it to at most {ctx.get('max_length')} characters"
    if err_type == "literal_error":
        return f"use one of {ctx.get('expected')}"
    if err_type == "string_pattern_mismatch":
        return f"match the pattern {ctx.get('pattern')}"
    if err_type.endswith(("_type", "_parsing")):
        return "give a value of the expected type (see docs/configuration.md)"
    return "see docs/configuration.md"
