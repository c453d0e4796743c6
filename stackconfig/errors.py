"""Config errors that tell the user which key is wrong, what it held and what to do."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError


class _Unset:
    """The value of a key that is not in the stack file at all (printed as `(not set)`, not as `None`)."""

    def __repr__(self) -> str:
        return "(not set)"


UNSET: Any = _Unset()


@dataclass(frozen=True)
class Shown:
    """A value described rather than quoted, e.g. `(empty file)`."""

    text: str

    def __repr__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Problem:
    key: str
    value: Any
    message: str
    fix: str

    def __str__(self) -> str:
        value = UNSET if self.value is None else self.value  # a key with no value, never Python's `None`
        return f"{self.key}: {value!r} {self.message}. Fix: {self.fix}"


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


def key_pattern(loc: Iterable[str | int]) -> str:
    """A key path with its list indexes as `[]`: ('workloads', 0, 'image') -> 'workloads[].image', as the sections
    of stackconfig/stack.py (KNOWN_KEYS, REQUIRED_KEYS) are keyed."""
    return key_path(["[]" if isinstance(p, int) else p for p in loc]).replace(".[]", "[]")


def clean_loc(loc: Iterable[Any]) -> tuple[str | int, ...]:
    """pydantic's location without the validator name it appends for function-wrapped fields and the '[key]' it
    appends for a dict's key."""
    return tuple(p for p in loc if not (isinstance(p, str) and (p.startswith("function-") or p == "[key]")))


def from_validation_error(
    exc: ValidationError,
    known_keys: Mapping[str, Sequence[str]],
    prefix: Sequence[str | int] = (),
    required_keys: Mapping[str, Sequence[str]] | None = None,
) -> list[Problem]:
    """Translate pydantic's errors into Problems in our words: the key path, the value and the fix.

    `known_keys` maps a model path pattern (indexes replaced by '[]') to its accepted keys, for "did you mean"
    hints on unknown keys and for what a section that is not a mapping should hold; `required_keys` the same
    patterns' required keys, for the fix of a missing section. No message of pydantic's is
    passed through: an error type without a translation here is a bug (tests/test_config_messages.py sweeps
    every key with values of every wrong kind).
    """
    problems = []
    for err in exc.errors():
        if err["type"] == "default_factory_not_called":
            # A default computed from the section's other keys (a GPU pool's labels from its name) that pydantic did
            # not compute because one of them is bad: that key's own problem is the one to report.
            continue
        loc = [*prefix, *clean_loc(err["loc"])]
        key = key_path(loc)
        value = err.get("input")
        ctx = err.get("ctx") or {}
        pattern = key_pattern(loc)
        if err["type"] == "extra_forbidden":
            candidates = list(known_keys.get(key_pattern(loc[:-1]), ()))
            guess = difflib.get_close_matches(str(loc[-1]), candidates, n=1)
            hint = f"did you mean '{guess[0]}'? " if guess else ""
            problems.append(
                Problem(key, value, "is not a known key (a typo would otherwise be ignored silently)",
                        f"{hint}valid keys here: {', '.join(candidates)}")
            )
        elif err["type"] == "invalid_value":  # our own validators (stackconfig/values.py `invalid`): our words
            problems.append(Problem(key, value, err["msg"], str(ctx.get("fix"))))
        else:
            sub_keys = (required_keys or {}).get(pattern) if err["type"] == "missing" else known_keys.get(pattern)
            message, fix = _translate(err["type"], ctx, key, value, sub_keys)
            problems.append(Problem(key, UNSET if err["type"] == "missing" else value, message, fix))
    return problems


def _translate(
    err_type: str, ctx: Mapping[str, Any], key: str, value: Any, section_keys: Sequence[str] | None
) -> tuple[str, str]:
    """(message, fix) for one pydantic error type, phrased to follow `<key>: <value>`."""
    quoted = isinstance(value, str)
    if err_type == "missing":
        wanted = f" (with at least {', '.join(section_keys)})" if section_keys else ""
        return "is required", f"set {key}{wanted} in the stack file; docs/configuration.md lists every key"
    if err_type in ("int_type", "int_parsing", "int_from_float"):
        if isinstance(value, bool):
            return "is a boolean (true/false), not a whole number", "write a whole number, e.g. 2"
        if quoted and value.strip().lstrip("-").isdigit():
            return "is text, not a whole number", f"write {value.strip()} without quotes"
        return "is not a whole number", "write a whole number, e.g. 2"
    if err_type in ("float_type", "float_parsing"):
        if isinstance(value, bool):
            return "is a boolean (true/false), not a number", "write a number, e.g. 60"
        if quoted and _is_number_text(value):
            return "is text, not a number", f"write {value.strip()} without quotes"
        return "is not a number", "write a number, e.g. 60"
    if err_type == "finite_number":
        return "is not a finite number", "write a finite number"
    if err_type in ("bool_type", "bool_parsing"):
        if quoted and value.strip().lower() in ("yes", "no", "on", "off", "y", "n"):
            return ("is text: the Pulumi CLI reads YAML 1.2, where only true and false are booleans",
                    "write true or false")
        return "is not a boolean", "write true or false, without quotes"
    if err_type == "string_type":
        return "is not text", "write text, in quotes if it looks like a number or a boolean"
    if err_type in ("model_type", "model_attributes_type", "dataclass_type"):
        listed = f": {', '.join(section_keys)}" if section_keys else ""
        return "is not a mapping of keys", f"write the keys of {key} indented under it{listed}"
    if err_type == "dict_type":
        return "is not a mapping", f"write {key} as 'name: value' lines indented under it"
    if err_type in ("list_type", "tuple_type", "set_type"):
        return "is not a list", f"write {key} as a YAML list (one '- ' item per line, or [a, b])"
    if err_type in ("too_short", "too_long"):
        bound = ctx.get("min_length") if err_type == "too_short" else ctx.get("max_length")
        word = "at least" if err_type == "too_short" else "at most"
        return (f"has {ctx.get('actual_length')} item(s); {key} takes {word} {bound}",
                f"give {key} {word} {bound} item(s)")
    if err_type == "string_too_short":
        if ctx.get("min_length") == 1:
            return "is empty", f"give {key} a value, or remove the key"
        return f"is shorter than {ctx.get('min_length')} characters", f"lengthen it to {ctx.get('min_length')}"
    if err_type == "string_too_long":
        return (f"is longer than {ctx.get('max_length')} characters",
                f"shorten it to at most {ctx.get('max_length')} characters")
    if err_type in _BOUNDS:
        name, sign, words = _BOUNDS[err_type]
        bound = _number(ctx.get(name))
        return f"{words} {bound}", f"use a value {sign} {bound}"
    if err_type == "literal_error":
        expected = str(ctx.get("expected", "")).replace("'", "")
        return "is not one of the values this key takes", f"use one of: {expected.replace(' or ', ', ')}"
    if err_type == "string_pattern_mismatch":
        return "does not have the form this key takes", f"match {ctx.get('pattern')}"
    if err_type.startswith("tuple"):
        return "is not a list", f"write {key} as a YAML list"
    return f"is not valid here ({err_type})", "see docs/configuration.md for this key"


def _number(value: Any) -> str:
    """A bound as the stack file would write it: 0.0 as 0."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _is_number_text(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


_BOUNDS = {
    "greater_than_equal": ("ge", "≥", "must be at least"),
    "greater_than": ("gt", ">", "must be greater than"),
    "less_than_equal": ("le", "≤", "must be at most"),
    "less_than": ("lt", "<", "must be less than"),
}
