"""Reading `Pulumi.<stack>.yaml` strictly: syntax errors, tabs and duplicate keys with file, line and column.

Why not PyYAML's `safe_load`: it keeps the last of two equal keys without a word (a second
`gpu-autoscaling:gpuPool` block silently replaces the first) and its errors surface as a long traceback.
ruamel.yaml refuses duplicate keys by default (https://yaml.dev/doc/ruamel.yaml/api/#Duplicate_keys) and marks
every error with its position, so each becomes one Problem `Pulumi.dev.yaml:12:3: ...`. It reads YAML 1.2, like
the Pulumi CLI's Go YAML library, so `yes`/`no`/`on`/`off` stay strings there as here.

Also here: which config namespaces a stack may use (`namespace_problems`), because a key under a misspelled
project name (`gpu-autoscalling:gpuPool`) is otherwise handed to nobody and the defaults apply silently.

This is the one reader of stack files: `read_stack` gives the program's checks, the offline engine (config as the
CLI would pass it), `python -m stackconfig` and the what-if the same keys, positions and secret placeholders.
"""

from __future__ import annotations

import copy
import datetime
import difflib
import functools
import io
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from stackconfig.errors import ConfigError, Problem, Shown
from stacknames import SECRETS_NAMESPACE

#: Namespaces besides the project's that this program (or Pulumi itself) reads: the Gcore provider's token and
#: endpoint, the Kubernetes provider's settings, and Pulumi's own `pulumi:` keys. Anything else in a
#: stack file is read by nobody.
#: `secrets:` holds the values that workloads (secretEnv, imagePullSecret) and alerting receivers reference by key;
#: the program refuses such a key when it is set without `--secret` (__main__.secret_config).
KNOWN_NAMESPACES = ("gcore", "kubernetes", "pulumi", SECRETS_NAMESPACE)
#: The Gcore v0 provider's config keys (G-Core/terraform-provider-gcore v0.34.3, docs/index.md "Schema", in Pulumi's
#: camelCase): a misspelled `gcore:permanentApiTokn` would leave the provider without its token until it first
#: calls the API. `gcore:apiKey` is the v2 provider's name and is refused here too.
GCORE_KEYS = (
    "apiEndpoint", "gcoreApi", "gcoreCdnApi", "gcoreClientId", "gcoreCloudApi", "gcoreDnsApi", "gcoreFastedgeApi",
    "gcorePlatform", "gcorePlatformApi", "gcoreStorageApi", "gcoreWaapApi", "ignoreCredsAuthError", "password",
    "permanentApiToken", "userName",
)


#: The top-level keys of a Pulumi stack file (pulumi/pulumi sdk/go/common/workspace/project.go `ProjectStack`:
#: secrets provider, its encrypted key and salt, the config, and the ESC environments it imports).
STACK_FILE_KEYS = ("config", "environment", "secretsprovider", "encryptedkey", "encryptionsalt")

#: What an offline reader gives a `secure:` value it cannot decrypt (no credentials, no passphrase).
SECRET_PLACEHOLDER = "offline-placeholder-secret"


class StackFileError(ConfigError):
    """The stack file cannot be read as YAML (or holds a key twice); every Problem names file:line:column."""


@dataclass(frozen=True)
class StackFile:
    """A stack file's `config:` as plain values, where each key stands, and which values are `secure:`."""

    path: Path
    config: Mapping[str, Any]
    #: 1-based (line, column) of each key under `config:`.
    positions: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    secure_keys: tuple[str, ...] = ()
    #: What is wrong around `config:` that does not stop the rest from being checked (an unknown top-level key).
    problems: tuple[Problem, ...] = ()
    #: The file imports ESC environments (`environment:`), which may set keys the file itself does not.
    imports_environment: bool = False


def _plain(value: Any) -> Any:
    """ruamel's round-trip types (CommentedMap, ScalarFloat, …) as plain Python values the JSON encoder takes."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, datetime.date):  # the CLI hands unquoted dates to the program as strings
        return value.isoformat()
    return str(value)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _misindented_line(lines: list[str], at: int, column: int, problem: str) -> int | None:
    """The line whose indentation broke the parse, or None when the error is not one of indentation.

    ruamel reports the line where the parse failed, which is not always the wrong one: after a key indented by 3
    among keys at 4, it is the next correct key that "is not allowed here". The wrong line is the one whose indent
    is odd (the stack files, like Pulumi's, indent by two), either the flagged line or the nearest line above it
    at the same depth or less; else the flagged line itself. `key: a: b` on one line is a quoting problem, not this.
    """
    if at >= len(lines):
        return None
    if "mapping values are not allowed here" in problem:
        if ": " in lines[at][:column] or lines[at][:column].rstrip().endswith(":"):
            return None  # a second ': ' on the line of its key: a value to quote
    elif "expected <block end>" not in problem:
        return None
    here = _indent(lines[at])
    above = next((i for i in range(at - 1, -1, -1)
                  if lines[i].strip() and not lines[i].lstrip().startswith("#") and _indent(lines[i]) <= here), None)
    if here % 2 == 0 and above is not None and _indent(lines[above]) % 2:
        return above
    return at


def _problem(path: Path, text: str, exc: MarkedYAMLError) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    where = f"{path.name}:{mark.line + 1}:{mark.column + 1}" if mark else path.name
    lines = text.splitlines()
    source = lines[mark.line].strip(" ") if mark and mark.line < len(lines) else ""
    problem = (exc.problem or "is not valid YAML").strip()
    duplicate = re.match(r'found duplicate key "(.*?)" with value', problem)
    if duplicate:
        start = f" (the mapping starts at line {exc.context_mark.line + 1})" if exc.context_mark else ""
        problem = f'gives the key "{duplicate.group(1)}" a second time{start}'
        fix = "keep one of the two and merge them: YAML would silently use only the last one"
    elif "'\\t'" in problem:
        fix = "indent with spaces: YAML does not allow tabs for indentation"
    elif mark and (wrong := _misindented_line(lines, mark.line, mark.column, problem)) is not None:
        indent = _indent(lines[wrong])
        spaces = f"{indent} space{'' if indent == 1 else 's'}"
        return Problem(f"{path.name}:{wrong + 1}:{indent + 1}", lines[wrong].strip(" "),
                       f"has the wrong indentation ({spaces}): it does not line up with the lines around it, "
                       "and YAML reads the structure from indentation alone",
                       "indent each key two spaces right of the key it belongs under, and its siblings by the same "
                       "amount")
    else:
        context = f"{exc.context.strip()}: " if exc.context else ""
        problem = context + problem
        fix = "correct the YAML syntax at that position (quote values that contain ': ' or start with '{', '[', '*')"
    return Problem(where, source, problem, fix)


def read_stack_file(path: Path) -> StackFile:
    """Parse a stack file; raise StackFileError (a ConfigError) with file, line and column on any YAML error.

    ruamel's round-trip parser is slow (tens of ms), and one evaluation reads the same file several times (the
    offline engine, the program, the secret placeholders): a parse is kept per content and handed out as a copy.
    """
    if path.is_dir():
        raise StackFileError([Problem(path.name, str(path), "is a directory, not a stack file",
                                      "remove the directory or rename it; a stack file is YAML text")])
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise StackFileError([Problem(f"{path.name}:{line}", f"byte {exc.object[exc.start]:#04x}", "is not UTF-8 text",
                                      "save the stack file as UTF-8 (the Pulumi CLI reads nothing else)")]) from None
    return copy.deepcopy(_parse(path, text))


@functools.lru_cache(maxsize=32)
def _parse(path: Path, text: str) -> StackFile:
    yaml = YAML(typ="rt")  # round-trip: keeps each key's position; refuses duplicate keys
    try:
        data = yaml.load(io.StringIO(text))
    except MarkedYAMLError as exc:
        raise StackFileError([_problem(path, text, exc)]) from None
    except YAMLError as exc:  # unmarked (rare): still no traceback
        raise StackFileError([Problem(path.name, "", str(exc).strip(), "correct the YAML syntax")]) from None
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise StackFileError([Problem(path.name, _plain(data), "is not a mapping of top-level keys",
                                      "start the file with 'config:' and the keys under it")])
    problems = _top_level_problems(path, data)
    if "config" not in data and problems:
        raise StackFileError(problems)  # nothing under `config:`: every rule would only judge the defaults
    config = data.get("config")
    config = {} if config is None else config
    if not isinstance(config, Mapping):
        raise StackFileError([Problem(f"{path.name}: config", _plain(config), "is not a mapping of keys",
                                      "put one 'namespace:key: value' per line under 'config:'")])
    positions = {}
    lc = getattr(config, "lc", None)
    for key in config:
        if lc is not None:
            line, column = lc.key(key)
            positions[str(key)] = (line + 1, column + 1)
    secure = tuple(str(k) for k, v in config.items() if isinstance(v, Mapping) and set(v) == {"secure"})
    return StackFile(path, _plain(config), positions, secure, tuple(problems), "environment" in data)


def _top_level_problems(path: Path, data: Mapping[Any, Any]) -> list[Problem]:
    """Top-level keys a Pulumi stack file does not have (the CLI reads only STACK_FILE_KEYS and ignores the rest).

    Without a `config:` line every key is one of these: the stack's keys at the top level (`gpu-autoscaling:cluster:`
    not indented), or `config:` misspelled (`confg:`). Either way the program would see no config at all and report
    only that `cluster` is missing.
    """
    lc = getattr(data, "lc", None)
    out = []
    if not any(key in data for key in ("config", "environment")) and all(key in STACK_FILE_KEYS for key in data):
        shown = Shown("(empty file)") if not data else Shown(f"(only {', '.join(map(str, data))})")
        return [Problem(path.name, shown, "has no 'config:' section (and imports no ESC environment)",
                        "add a line 'config:' with the stack's keys indented under it, as in the README's minimal "
                        "stack file")]
    for key in data:
        if key in STACK_FILE_KEYS:
            continue
        where = path.name
        if lc is not None:
            line, column = lc.key(key)
            where = f"{path.name}:{line + 1}:{column + 1}"
        guess = difflib.get_close_matches(str(key), STACK_FILE_KEYS, n=1, cutoff=0.6)
        if guess:
            fix = f"did you mean '{guess[0]}:'? A stack file's top-level keys are {', '.join(STACK_FILE_KEYS)}"
        elif "config" not in data:
            fix = ("put a line 'config:' first and indent this key and the stack's other keys under it (two spaces), "
                   "as in the README's minimal stack file")
        else:
            fix = (f"move it under 'config:' (as '<namespace>:{key}') or delete it; a stack file's top-level keys "
                   f"are {', '.join(STACK_FILE_KEYS)}")
        message = ("is at the top level of the stack file, where the Pulumi CLI reads no config" if "config" not in data
                   else "is not a top-level key of a Pulumi stack file: the CLI ignores it")
        out.append(Problem(where, str(key), message, fix))
    return out


def project_name(project_dir: Path) -> str:
    """The `name:` of the project's Pulumi.yaml (ConfigError when it has none)."""
    data = YAML(typ="safe", pure=True).load((project_dir / "Pulumi.yaml").read_text(encoding="utf-8"))
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name:
        raise ConfigError([Problem(str(project_dir / "Pulumi.yaml"), name, "has no project `name:`",
                                   "give --dir a Pulumi project folder (its Pulumi.yaml names the project)")])
    return name


def full_key(key: str, project: str) -> str:
    """A stack-file key without a namespace belongs to the project (the Pulumi CLI's rule)."""
    return key if ":" in key else f"{project}:{key}"


@dataclass(frozen=True)
class Stack:
    """A project's stack file, with each key under its full `<namespace>:<key>` name."""

    project: str
    file: StackFile

    def config(self) -> dict[str, Any]:
        """Every key's plain value; a `secure:` one is SECRET_PLACEHOLDER."""
        sf = self.file
        return {full_key(k, self.project): (SECRET_PLACEHOLDER if k in sf.secure_keys else v)
                for k, v in sf.config.items()}

    def secret_keys(self) -> list[str]:
        """The full names of the `secure:` keys."""
        return [full_key(k, self.project) for k in self.file.secure_keys]

    def positions(self) -> dict[str, str]:
        """`Pulumi.dev.yaml:5:3` per full key (the file name alone for a key without a position), for messages."""
        where = {k: f"{self.file.path.name}:{line}:{column}" for k, (line, column) in self.file.positions.items()}
        return {full_key(k, self.project): where.get(k, self.file.path.name) for k in self.file.config}

    def engine_config(self) -> dict[str, str]:
        """Config as the Pulumi CLI passes it to a program: a string as it is, anything else as JSON text."""
        return {k: v if isinstance(v, str) else json.dumps(v) for k, v in self.config().items()}

    def project_keys(self) -> dict[str, Any]:
        """The project's own keys without `<project>:` (what `load_stack_config` takes); `secure:` ones left out."""
        prefix, secure = f"{self.project}:", set(self.secret_keys())
        return {k.removeprefix(prefix): v for k, v in self.config().items() if k.startswith(prefix)
                and k not in secure}

    def namespace_problems(self) -> list[Problem]:
        return namespace_problems(self.config(), self.project, self.positions())


def read_stack(project_dir: Path, stack: str) -> Stack:
    """`Pulumi.<stack>.yaml` of the project in `project_dir`, read strictly (StackFileError with file:line:column;
    FileNotFoundError when there is no such file)."""
    return Stack(project_name(project_dir), read_stack_file(project_dir / f"Pulumi.{stack}.yaml"))


def namespace_problems(keys: Iterable[str], project: str, where: Mapping[str, str] | None = None) -> list[Problem]:
    """Keys whose namespace is neither the project's nor one of KNOWN_NAMESPACES: nobody would read them.

    A key without a namespace is the project's (the CLI's rule). `where` may give each key's file position.
    """
    allowed = (project, *KNOWN_NAMESPACES)
    out = []
    for full in keys:
        namespace, sep, key = full.partition(":")
        position = f" ({where[full]})" if where and full in where else ""
        if key in allowed and namespace == project:  # `gpu-autoscaling:` with the keys nested under it
            out.append(Problem(full.removeprefix(f"{project}:"), Shown(f"({key}: with keys under it)"),
                               f"nests keys under the namespace{position}, but Pulumi config keys are flat "
                               f"'<namespace>:<key>' entries, so nothing under it would be read",
                               f"write each key directly under 'config:' as '{key}:<key>:'"
                               + (f", e.g. '{key}:cluster:'" if key == project else "")))
            continue
        if namespace == "gcore" and key not in GCORE_KEYS:
            guess = difflib.get_close_matches(key, GCORE_KEYS, n=1, cutoff=0.6)
            hint = f"did you mean 'gcore:{guess[0]}'? " if guess else ""
            out.append(Problem(full, key, f"is not a config key of the Gcore provider v0{position}",
                               f"{hint}valid keys: {', '.join(GCORE_KEYS)}"))
            continue
        if not sep or namespace in allowed:
            continue
        guess = difflib.get_close_matches(namespace, allowed, n=1, cutoff=0.6)
        hint = f"did you mean '{guess[0]}:{key}'? " if guess else ""
        out.append(Problem(full, namespace,
                           f"is not a config namespace this program reads{position}: the value would be ignored "
                           "and the defaults used",
                           f"{hint}project keys go under '{project}:'; other namespaces read here: "
                           f"{', '.join(KNOWN_NAMESPACES)}"))
    return out
