"""`python -m stackconfig <stack> [--dir DIR]`: check `Pulumi.<stack>.yaml` without Pulumi, credentials or network.

Exit 0 when the stack file is valid, 2 when it is not (every problem listed with key, value and fix; YAML errors
with file:line:column), so scripts and CI can tell a config mistake from a crash (exit 1).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from stackconfig.errors import ConfigError
from stackconfig.loader import check_stack

CONFIG_ERROR = 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stackconfig", description=__doc__.splitlines()[0])
    parser.add_argument("stack", help="stack name: reads Pulumi.<stack>.yaml")
    parser.add_argument("--dir", default=".", help="project directory (default: the current one)")
    args = parser.parse_args(argv)
    try:
        cfg = check_stack(Path(args.dir), args.stack)
    except FileNotFoundError as exc:
        print(f"stackconfig: {args.stack}: {exc.strerror}: {exc.filename}", file=sys.stderr)
        return CONFIG_ERROR
    except ConfigError as exc:
        print(f"stackconfig: {args.stack}: {exc}", file=sys.stderr)
        return CONFIG_ERROR
    print(f"stackconfig: {args.stack}: valid ({len(cfg.workloads)} workload(s), up to {cfg.max_gpus} GPUs)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
