"""`python -m stackconfig <stack> [--dir DIR]`: check `Pulumi.<stack>.yaml` without Pulumi, credentials or network.

Exit 0 when the stack file is valid, i.e. `pulumi up` would accept it (secrets included: every `secrets:` key the
stack refers to set, and set with `--secret`), 2 when it is not (every problem listed with key, value and fix; YAML
errors with file:line:column), so scripts and CI can tell a config mistake from a crash (exit 1).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from stackconfig.errors import ConfigError
from stackconfig.loader import check_stack

CONFIG_ERROR = 2
#: The repository this checker belongs to (the project its own stack files are in).
REPOSITORY = Path(__file__).resolve().parent.parent


def _stacks(project: Path) -> list[str]:
    return sorted(p.name.split(".")[1] for p in project.glob("Pulumi.*.yaml"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stackconfig", description=__doc__.splitlines()[0])
    parser.add_argument("stack", help="stack name: reads Pulumi.<stack>.yaml")
    parser.add_argument("--dir", default=".", help="project directory holding Pulumi.yaml and the stack files "
                        "(default: the current one); the command itself runs from any directory")
    args = parser.parse_args(argv)
    project = Path(args.dir)
    if not project.is_dir():
        print(f"stackconfig: {args.stack}: --dir {args.dir} is not a directory. Fix: give the project folder "
              f"(this tool's own: {REPOSITORY})", file=sys.stderr)
        return CONFIG_ERROR
    try:
        cfg = check_stack(project, args.stack, require_secrets=True)
    except FileNotFoundError as exc:
        missing = Path(exc.filename or "").name
        fix = (f"give --dir the project folder (this tool's own: {REPOSITORY})" if missing == "Pulumi.yaml" else
               "name one of the stacks there: " + (", ".join(_stacks(project)) or "none"))
        print(f"stackconfig: {args.stack}: no {missing} in {project.resolve()}. Fix: {fix}", file=sys.stderr)
        return CONFIG_ERROR
    except ConfigError as exc:
        print(f"stackconfig: {args.stack}: {exc}", file=sys.stderr)
        return CONFIG_ERROR
    print(f"stackconfig: {args.stack}: valid ({len(cfg.workloads)} workload(s), up to {cfg.max_gpus} GPUs)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
