"""The tuner's recommendation as an edit of `Pulumi.<stack>.yaml`: every line it does not change kept byte for
byte (comments, quoting, the flow lists), and a unified diff `git apply` takes.

Why not dump the file with ruamel.yaml's round trip: it keeps comments but re-flows what it re-emits (prod's
multi-line `args: [...]` becomes one line), so the diff would show lines nobody changed. ruamel's round-trip
parser is used for what it is exact at, where each key and value stands (`.lc`), and the new text is written at
those positions. The result is then read back and validated: it must load to exactly the config the `--set`
overrides give (`stackconfig.load_stack_config`), or the edit is refused as a bug rather than shown.

Paths are those of `--set` (`gpuPool.minNodes`, `workloads.0.schedules`, `cluster.autoscaler.scan-interval`). A
value of None or [] deletes the key (the default is the same), and the comment lines directly above it, which
describe what is gone.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

INDENT = 2


def scalar(value: Any) -> str:
    """A YAML scalar: plain where YAML reads it back as the same value, double-quoted (JSON) otherwise."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    text = str(value)
    plain = re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_./+-]*", text) is not None
    return text if plain and yaml.safe_load(text) == text else json.dumps(text)


def render(key: str, value: Any, col: int) -> list[str]:
    """`key: value` at column `col`, in the stack files' block style (lists of mappings as `- k: v`)."""
    pad = " " * col
    if isinstance(value, Mapping) and value:
        return [f"{pad}{key}:"] + [line for k, v in value.items() for line in render(str(k), v, col + INDENT)]
    if isinstance(value, list) and value and all(isinstance(v, Mapping) and v for v in value):
        lines = [f"{pad}{key}:"]
        for item in value:
            body = [line for k, v in item.items() for line in render(str(k), v, col + 2 * INDENT)]
            body[0] = f"{' ' * (col + INDENT)}- {body[0][col + 2 * INDENT:]}"
            lines += body
        return lines
    if isinstance(value, list):
        return [f"{pad}{key}: [{', '.join(scalar(v) for v in value)}]"]
    if isinstance(value, Mapping):
        return [f"{pad}{key}: {{}}"]
    return [f"{pad}{key}: {scalar(value)}"]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _block_end(lines: list[str], key_line: int, col: int) -> int:
    """The line after the last one of the value that starts at `key_line` (trailing comments excluded: they
    introduce what follows)."""
    last = key_line
    for i in range(key_line + 1, len(lines)):
        line = lines[i]
        if not _is_content(line):
            continue
        if _indent(line) > col or (_indent(line) == col and line.lstrip().startswith("- ")):
            last = i
        else:
            break
    return last + 1


def _leading_comments(lines: list[str], key_line: int, col: int) -> int:
    """The first of the comment lines directly above `key_line` at its indentation."""
    first = key_line
    while first > 0 and lines[first - 1].strip().startswith("#") and _indent(lines[first - 1]) == col:
        first -= 1
    return first


class StackText:
    """A stack file's text and its round-trip parse, edited one change at a time."""

    def __init__(self, text: str, project: str) -> None:
        self.text, self.project = text, project

    def _config(self) -> CommentedMap:
        doc = YAML().load(self.text)
        return doc["config"]

    def _section(self, config: CommentedMap, name: str) -> str | None:
        for key in (f"{self.project}:{name}", name):
            if key in config:
                return key
        return None

    def apply(self, path: str, value: Any) -> None:
        parts = path.split(".")
        config = self._config()
        lines = self.text.splitlines(keepends=True)
        section = self._section(config, parts[0])
        if section is None:
            self._insert(lines, config, f"{self.project}:{parts[0]}", _nest(parts[1:], value))
            return
        node: Any = config
        key: Any = section
        for i, part in enumerate(parts[1:], start=1):
            child = node[key]
            if isinstance(child, CommentedSeq):
                node, key = child, int(part)
            elif isinstance(child, CommentedMap) and part in child:
                node, key = child, part
            elif isinstance(child, CommentedMap):
                if value is not None and value != []:  # deleting what is not there is nothing to do
                    self._insert(lines, child, part, _nest(parts[i + 1:], value))
                return
            else:
                raise ValueError(f"{path}: {key} holds no mapping")
        if not isinstance(node, CommentedMap):
            raise ValueError(f"{path}: only mapping keys can be changed")
        self._replace(lines, node, key, value)

    def _replace(self, lines: list[str], node: CommentedMap, key: str, value: Any) -> None:
        key_line, col = node.lc.key(key)
        end = _block_end(lines, key_line, col)
        if (value is None or value == []) and len(node) > 1:
            del lines[_leading_comments(lines, key_line, col):end]
        else:
            v_line, v_col = node.lc.value(key)
            old = node[key]
            simple = not isinstance(value, Mapping | list) and not isinstance(old, Mapping | list)
            if simple and v_line == key_line and end == key_line + 1:
                line = lines[key_line]
                body, newline = (line[:-1], "\n") if line.endswith("\n") else (line, "")
                match = re.match(r'("(?:[^"\\]|\\.)*"|\'[^\']*\'|[^#]*?)(\s+#.*)?$', body[v_col:])
                assert match is not None
                lines[key_line] = body[:v_col] + scalar(value) + (match.group(2) or "") + newline
            else:
                lines[key_line:end] = [line + "\n" for line in render(str(key), value, col)]
        self.text = "".join(lines)

    def _insert(self, lines: list[str], node: CommentedMap, key: str, value: Any) -> None:
        if not node:
            raise ValueError(f"cannot add {key} to an empty mapping")
        last = list(node)[-1]
        key_line, col = node.lc.key(last)
        at = _block_end(lines, key_line, col)
        if at > 0 and not lines[at - 1].endswith("\n"):
            lines[at - 1] += "\n"
        lines[at:at] = [line + "\n" for line in render(key, value, col)]
        self.text = "".join(lines)


def _nest(parts: list[str], value: Any) -> Any:
    for part in reversed(parts):
        value = {part: value}
    return value


def edited(text: str, project: str, changes: Mapping[str, Any]) -> str:
    """`text` with every change applied, in the order given."""
    doc = StackText(text, project)
    for path, value in changes.items():
        doc.apply(path, value)
    return doc.text


def unified_diff(old: str, new: str, name: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))
