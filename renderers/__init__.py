"""Renderers: pure functions from the typed config to what the cluster is given, each module named for what it renders.

No Pulumi, no resources: components (components/) hand what these return to the resources they create, and the
tests, the what-if (capacity/) and the docs run the very same functions. Read in this order: `placement.py` (where
GPU pods go), `promql.py` (the queries KEDA and the HPA act on), `dcgm.py` (the one GPU scrape path),
`workload_specs.py` and `headroom_specs.py` (object specs), `gcore_cluster.py` (autoscaler flags and timeouts),
`chart_values.py` (the three charts' values), `rule_groups.py` with `runbooks/` (alerts and recording rules),
`alertmanager_config.py`, `dashboards.py`.
"""
