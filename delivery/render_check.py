"""Render check: the pinned charts rendered with the program's values, checked as the cluster would check them.

    python -m delivery.render_check <stack> [<stack>...] [--out report.md]

Evaluates the stack's program offline (offline/engine.py, the same graph `python -m offline.plan` writes),
renders its three Helm releases from the chart cache (delivery/render.py) and checks every object that would
reach the cluster, from the charts, from the GPU Operator at run time and from the program itself:

- strict schema validation: built-in kinds with kubernetes-validate at the cluster's version; custom resources
  against the CRDs the charts install, with unknown fields refused (the API server would prune them);
- each chart's values.schema.json (where it has one);
- Pod Security admission: every pod template against the `enforce` level of the namespace it lands in;
- the platform's wiring: one DCGM scrape path with `honorLabels` and our relabelings, the 10 s DCGM refresh,
  Prometheus selecting objects other releases created, Grafana's existing admin Secret, the KEDA metrics port
  our ServiceMonitor selects, ClusterIP Services only, no Ingress;
- every values key the program sets is read by a template.

The objects are collected by delivery/placed_objects.py; the checks are delivery/schema_check.py (schemas, Pod
Security), delivery/wiring_check.py and delivery/values_sweep.py; this module runs them and is the CLI.

Exit 0: no violation; 1: violations (listed on stdout, and as Markdown in --out); 2: the stack or a chart could
not be read (the message says where the chart was looked for). No credentials, cluster or network needed.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from delivery.placed_objects import Finding, everything
from delivery.render import RELEASE_TYPE, StackRender, render_stack
from delivery.schema_check import check_pod_security, check_schemas, check_values_schemas
from delivery.values_sweep import unread_values
from delivery.wiring_check import (
    check_dcgm_path,
    check_exposure,
    check_grafana_secret,
    check_keda_metrics,
    check_prometheus_selectors,
)
from offline.engine import Recording


def check(rec: Recording, rendered: StackRender | None = None, values_read: bool = True) -> list[Finding]:
    """Every finding for one recorded stack; [] means the render check passes.

    `values_read=False` leaves out the per-key re-renders (one render per values leaf), which the tests run
    separately to keep the suite fast.
    """
    rendered = rendered or render_stack(rec)
    placed = everything(rec, rendered)
    return [
        *check_values_schemas(rendered), *check_schemas(placed, rendered), *check_pod_security(placed),
        *check_dcgm_path(placed, rendered), *check_prometheus_selectors(placed), *check_grafana_secret(placed),
        *check_keda_metrics(placed), *check_exposure(placed),
        *(f for rel in rendered.releases for f in (unread_values(rel) if values_read else ())),
    ]


def recording_from_plan(path: Path) -> Recording:
    """The resources of an offline plan (`python -m offline.plan <stack> --out <file>`) as a Recording.

    Lets the fork review (base branch code, .github/scripts/offline-plan-review.sh) check the pull request's
    plan as data, without running the pull request's program. Secrets are redacted in a plan (`[secret]`),
    which changes no check: they are never rendered into a chart.
    """
    from delivery.policy_check import read_plan
    from offline.engine import RecordedResource
    from offline.plan import REDACTED

    plan = read_plan(path)
    rec = Recording(str(plan.get("stack") or path.stem))
    for entry in plan["resources"]:
        ref = f"{entry['type']}::{entry['name']}"
        rec.resources.append(RecordedResource(
            type=entry["type"], name=entry["name"], urn=ref, custom=True, parent=str(entry.get("parent") or ""),
            provider=str(entry.get("provider") or ""), dependencies=tuple(entry.get("dependencies") or ()),
            property_dependencies={}, options=dict(entry.get("options") or {}),
            # A redacted field (`[secret]`) has lost its shape: leave it out rather than check a placeholder.
            inputs={k: v for k, v in (entry.get("inputs") or {}).items() if v != REDACTED},
        ))
    return rec


def _fetch_charts(rec: Recording) -> None:
    """The chart versions `rec` installs, into the cache (pins and stack overrides alike)."""
    from delivery import charts

    chart_of = {c.name: c for c in charts.PINNED}
    pins = sorted({(str(r.inputs["chart"]), str(r.inputs["version"])) for r in rec.of_type(RELEASE_TYPE)})
    unknown = [name for name, _ in pins if name not in chart_of]
    if unknown:
        raise ValueError(f"releases of charts {unknown} that stackconfig/versions.py does not know")
    charts.fetch(tuple((chart_of[name], version) for name, version in pins))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m delivery.render_check", description=__doc__.split("\n")[0])
    parser.add_argument("stacks", nargs="*", help="stacks whose program is evaluated offline")
    parser.add_argument("--plan", type=Path, action="append", default=[],
                        help="an offline plan file to check instead of evaluating the program (repeatable)")
    parser.add_argument("--out", type=Path, help="also write the report as Markdown")
    args = parser.parse_args(argv)
    if not args.stacks and not args.plan:
        parser.error("name a stack or --plan <file>")

    from delivery.charts import ChartMissing
    from offline.engine import record_stack
    from stackconfig import ConfigError

    lines, failed = [], False
    for label, load in [*((s, functools.partial(record_stack, s)) for s in args.stacks),
                        *((str(p), functools.partial(recording_from_plan, p)) for p in args.plan)]:
        try:
            rec = load()
            _fetch_charts(rec)
            findings = check(rec)
        except (ConfigError, ChartMissing, OSError, ValueError) as err:
            print(f"render check of {label}: cannot run: {err}", file=sys.stderr)
            return 2
        failed |= bool(findings)
        head = f"Render check — `{rec.stack}`: " + (f"**{len(findings)} violation(s)**" if findings else "**OK**")
        print(head)
        for f in findings:
            print(f"  {f}")
        lines += [f"### {head}", "", *(f"- {f}" for f in findings), ""]
    if args.out:
        args.out.write_text("\n".join(lines))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
