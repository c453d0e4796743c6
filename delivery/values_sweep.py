"""The unread-key sweep of the render check: every values leaf the program sets must be read by some template.

Each leaf is set to a sentinel of its type and the release rendered again: a leaf whose change leaves the render
identical is read by no template (a misspelt or misplaced key, which these charts ignore silently).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from delivery.placed_objects import Finding
from delivery.render import RenderedRelease


def leaves(values: Mapping[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, value) of every leaf; lists and empty maps are leaves (a list is replaced as a whole by Helm)."""
    for key, value in values.items():
        if isinstance(value, Mapping) and value:
            yield from leaves(value, (*path, key))
        else:
            yield (*path, key), value


def sentinel(value: Any) -> Any:
    """A different value of the same type, so a template that reads the key renders something else."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return f"{value}sentinel"
    if isinstance(value, list):
        return [] if value else ["sentinel"]
    if isinstance(value, Mapping):
        return {"sentinel": "sentinel"}
    return "sentinel"


def replaced(values: Mapping[str, Any], path: Sequence[str], new: Any) -> dict[str, Any]:
    out = dict(values)
    out[path[0]] = new if len(path) == 1 else replaced(out[path[0]], path[1:], new)
    return out


def unread_values(rel: RenderedRelease, skip: Callable[[tuple[str, ...], Any], bool] = lambda p, v: False,
                  ) -> Iterator[Finding]:
    """Each leaf of the release's values set to a sentinel: a leaf whose change leaves the render identical is
    read by no template (a misspelt or misplaced key, which these charts ignore silently)."""
    import helm_python

    base = rel.texts
    for path, value in leaves(rel.release.values):
        if skip(path, value):
            continue
        dotted = ".".join(path)
        try:
            changed = rel.render(replaced(rel.release.values, path, sentinel(value))) != base
        except helm_python.HelmRenderError:
            changed = True  # a template read the key (and failed on the sentinel)
        except helm_python.HelmValuesError as err:
            yield Finding("values-read", f"release {rel.release.name}", f"{dotted}: sentinel refused by the "
                          f"chart's values.schema.json ({err}); cannot tell whether a template reads it")
            continue
        if not changed:
            yield Finding("values-read", f"release {rel.release.name}", f"{dotted}={value!r} is read by no "
                          f"template of {rel.release.chart} {rel.release.version}: changing it changes nothing")
