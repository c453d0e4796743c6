"""Which config values a rule reads, so that no rule reports a problem computed from a value already refused.

A value that fails its type check is reported and dropped (stackconfig/loader.py), so its default stands in while
the rules across keys run on the rest. A rule that reads such a default would report a problem about a value the
stack file never gave: `gpuPool.maxNodes: abc` would also fail the packing rule, computed from the default 2.
Rather than have every rule declare what it reads (a list that drifts from the code), the rules read the config
through `Reading`, which records the key path of every value they reach; a problem is kept only when its rule read
nothing that was dropped (`Reads.touches`).

What counts as a read: a field's value that is not a section (a number, text, a mapping such as `labels`, or the
None of an absent optional section); the set of fields a section was given (`model_fields_set`: all its keys);
and a list's membership (iterating, indexing or measuring it), recorded separately, because a rule about one kept
list item does not depend on a sibling that was dropped, while a rule about the whole list does.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import BaseModel

from stackconfig.errors import key_path


@dataclass
class Reads:
    """Key paths (stack-file camelCase, list indexes as the rules saw them) a rule has read."""

    values: set[str] = field(default_factory=set)
    #: Lists read as a whole (iterated, indexed, measured).
    lists: set[str] = field(default_factory=set)

    def touches(self, dropped: str, problem_key: str) -> bool:
        """Whether the problem at `problem_key` of a rule that read these depends on the dropped key path."""
        if _within(problem_key, dropped) or any(_within(r, dropped) or _within(dropped, r) for r in self.values):
            return True
        # A list the rule read as a whole is gone: no problem of the rule stands. One of its items is gone: only
        # problems about one kept item stand.
        return any(_within(listed, dropped) or dropped.startswith(f"{listed}[") and not _under_item(problem_key, listed)
                   for listed in self.lists)


def _within(a: str, b: str) -> bool:
    """Path `a` is path `b`, or inside it."""
    return a == b or a.startswith((f"{b}.", f"{b}["))


def _under_item(key: str, listed: str) -> bool:
    """`workloads[0].name` is under an item of `workloads`; `workloads[*].maxReplicas` is not."""
    rest = key.removeprefix(listed)
    return rest != key and rest[:1] == "[" and rest[1:2].isdigit()


def _alias(model: type[BaseModel], name: str) -> str:
    info = model.model_fields[name]
    return info.alias or name


class Reading:
    """A config section seen through a recorder: fields, properties and methods behave as on the section, and it
    compares equal to it. It is not an instance of the section's class: rules read and compare sections, never
    test their types."""

    __slots__ = ("_value", "_path", "_reads")

    def __init__(self, value: BaseModel, path: tuple[str | int, ...], reads: Reads) -> None:
        self._value, self._path, self._reads = value, path, reads

    def __getattr__(self, name: str) -> Any:
        value, cls = self._value, type(self._value)
        if name in cls.model_fields:
            return _wrap(getattr(value, name), (*self._path, _alias(cls, name)), self._reads)
        if name == "model_fields_set":
            for field_name in cls.model_fields:
                self._reads.values.add(key_path((*self._path, _alias(cls, field_name))))
            return value.model_fields_set
        member = None if hasattr(BaseModel, name) else inspect.getattr_static(cls, name, None)
        if isinstance(member, property) and member.fget is not None:
            return member.fget(self)  # computed from fields read through this recorder
        if isinstance(member, types.FunctionType):
            return types.MethodType(member, self)
        return getattr(value, name)

    def __eq__(self, other: object) -> bool:
        return self._value == (other._value if isinstance(other, Reading) else other)

    def __hash__(self) -> int:
        return hash(self._value)


class ReadingList(list[Any]):
    """A list of config values whose membership, when read, is recorded; items are recorders too."""

    def __init__(self, items: list[Any], path: tuple[str | int, ...], reads: Reads) -> None:
        super().__init__(_wrap(item, (*path, i), reads) for i, item in enumerate(items))
        self._path_text = key_path(path)
        self._reads = reads

    def _read(self) -> None:
        self._reads.lists.add(self._path_text)

    def __iter__(self) -> Iterator[Any]:
        self._read()
        return super().__iter__()

    def __len__(self) -> int:
        self._read()
        return super().__len__()

    def __getitem__(self, index: Any) -> Any:
        self._read()
        return super().__getitem__(index)

    def __bool__(self) -> bool:
        self._read()
        return super().__len__() > 0


def _wrap(value: Any, path: tuple[str | int, ...], reads: Reads) -> Any:
    if isinstance(value, BaseModel):
        return Reading(value, path, reads)
    if isinstance(value, list):
        return ReadingList(value, path, reads)
    reads.values.add(key_path(path))
    return value


def reading(cfg: BaseModel, reads: Reads) -> Any:
    """`cfg` seen through a recorder that fills `reads` (typed as the config itself by the caller)."""
    return cast(Any, Reading(cfg, (), reads))
