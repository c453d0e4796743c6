"""Secrets in the stack's config: every `secrets:<key>` the stack refers to must be set, and every secret set
with `--secret`. One implementation for `pulumi up` (program/config.py, from the engine's config) and for
`python -m stackconfig` and the offline plan (from the stack file's `secure:` values), so "valid" means the same.

Why plain text is refused: Pulumi marks a value secret only when it was set with `pulumi config set --secret`;
otherwise it sits readable in `Pulumi.<stack>.yaml` (in git) and in the state. That holds for the Gcore provider's
credentials too (`gcore:permanentApiToken`, `gcore:password`): their schema marks them sensitive, but a plain value
in the stack file has been committed before any provider sees it.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from stackconfig.errors import UNSET, Problem, Shown
from stacknames import SECRETS_NAMESPACE

#: The Gcore v0 provider's credentials (G-Core/terraform-provider-gcore v0.34.3 provider schema: `Sensitive`).
GCORE_SECRET_KEYS = ("gcore:permanentApiToken", "gcore:password")
#: How a refused plain value is shown: never the value itself.
PLAIN_TEXT = Shown("(plain text, not shown)")


def set_command(full: str) -> str:
    return f"pulumi config set --secret {full} <value>"


def plain_text_problems(config: Mapping[str, Any], secret: Collection[str]) -> list[Problem]:
    """Every `secrets:` key and Gcore credential present in `config` (full keys) but not marked secret."""
    out = []
    for full in sorted(config):
        if (full.startswith(f"{SECRETS_NAMESPACE}:") or full in GCORE_SECRET_KEYS) and full not in secret:
            alternative = " (or export GCORE_PERMANENT_TOKEN instead)" if full == "gcore:permanentApiToken" else ""
            out.append(Problem(full, PLAIN_TEXT,
                               "is stored in plain text in the stack file, and would be in the state too",
                               f"run `pulumi config rm {full}` and `{set_command(full)}`{alternative}; if it was "
                               "ever committed, rotate it"))
    return out


def unset_problems(referenced: Sequence[str], config: Mapping[str, Any]) -> list[Problem]:
    """Every `secrets:<key>` of `referenced` (keys without the namespace) that `config` (full keys) lacks."""
    given = [k.removeprefix(f"{SECRETS_NAMESPACE}:") for k in config if k.startswith(f"{SECRETS_NAMESPACE}:")]
    out = []
    for key in referenced:
        full = f"{SECRETS_NAMESPACE}:{key}"
        if full in config:
            continue
        guess = difflib.get_close_matches(key, [g for g in given if g not in referenced], n=1, cutoff=0.7)
        hint = f" ({SECRETS_NAMESPACE}:{guess[0]} is set: a typo of one of the two?)" if guess else ""
        out.append(Problem(full, UNSET, f"is referenced by the stack config{hint}; `pulumi up` refuses to run "
                           "without it", f"run `{set_command(full)}`"))
    return out
