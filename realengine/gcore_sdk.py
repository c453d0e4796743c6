"""The Gcore package as the real toolchain produces it: its Pulumi schema and its generated Python SDK.

    python -m realengine.gcore_sdk            # regenerate the schema fixture (tests/fixtures/gcore) and sdks/gcore
    python -m realengine.gcore_sdk --check    # exit 1 if either differs from what the toolchain produces now

`pulumi package get-schema terraform-provider -- g-core/gcore <version>` is what `pulumi install` runs for
Pulumi.yaml's `packages: gcore` entry: the Any Terraform Provider (built from pulumi-terraform-bridge) asks the
Terraform provider for its schema over the Terraform plugin protocol and maps it to a Pulumi package. The Terraform
provider is terraform-provider-gcore at that version, built from its source by the toolchain; the mapping, the
names and the generated code are the real bridge's and the real codegen's.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from realengine.toolchain import ROOT, Toolchain, prepare, stamp

SDK_DIR = ROOT / "sdks" / "gcore"


def gcore_package() -> tuple[str, str]:
    """(registry source, version) from Pulumi.yaml's `packages: gcore` entry."""
    entry = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["packages"]["gcore"]
    source, version = entry["parameters"]
    return str(source), str(version)


FIXTURES = ROOT / "tests" / "fixtures" / "gcore"


def schema_fixture() -> Path:
    """The Pulumi schema of the package, as `pulumi package get-schema` prints it."""
    return FIXTURES / f"pulumi-schema-v{gcore_package()[1]}.json"


def get_schema(tc: Toolchain) -> dict[str, object]:
    source, version = gcore_package()
    out = subprocess.run(
        [tc.pulumi, "package", "get-schema", f"terraform-provider@{stamp('terraform-bridge')}", "--", source, version],
        env=tc.env(), check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)


def generate_sdk(tc: Toolchain, schema_path: Path, out: Path) -> None:
    subprocess.run([str(tc.bin / "pulumi-gen-python-sdk"), str(schema_path), str(out)], env=tc.env(), check=True,
                   capture_output=True, text=True)


#: What installing the SDK leaves in its directory (the generated .gitignore lists them): not part of it.
BUILD_LEFTOVERS = ["build", "dist", "__pycache__", ".mypy_cache", "pulumi_gcore.egg-info"]


def differences(a: Path, b: Path) -> list[str]:
    """Files that differ between two trees (relative paths), both ways, build leftovers aside."""
    cmp = filecmp.dircmp(a, b, ignore=BUILD_LEFTOVERS)
    out = [*cmp.left_only, *cmp.right_only, *cmp.diff_files, *cmp.funny_files]
    for sub in cmp.subdirs:
        out += [f"{sub}/{name}" for name in differences(a / sub, b / sub)]
    return sorted(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m realengine.gcore_sdk", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    args = ap.parse_args(argv)
    tc = prepare()
    schema = get_schema(tc)
    text = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    fixture = schema_fixture()
    with tempfile.TemporaryDirectory() as tmp:
        schema_file = Path(tmp) / "schema.json"
        schema_file.write_text(text)
        generated = Path(tmp) / "sdk"
        generate_sdk(tc, schema_file, generated)
        if args.check:
            stale = [str(fixture.relative_to(ROOT))] if not fixture.exists() or fixture.read_text() != text else []
            if SDK_DIR.exists():
                stale += [f"sdks/gcore/{p}" for p in differences(generated, SDK_DIR)]
            else:
                stale.append("sdks/gcore")
            for path in stale:
                print(f"differs from what the toolchain generates: {path}", file=sys.stderr)
            if stale:
                print("regenerate with: python -m realengine.gcore_sdk", file=sys.stderr)
            return 1 if stale else 0
        fixture.parent.mkdir(parents=True, exist_ok=True)
        fixture.write_text(text)
        subprocess.run(["rm", "-rf", str(SDK_DIR)], check=True)
        SDK_DIR.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-r", str(generated), str(SDK_DIR)], check=True)
    print(f"wrote {FIXTURES.relative_to(ROOT)} and {SDK_DIR.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
