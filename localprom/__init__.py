"""A real Prometheus on loopback and the DCGM scrape path as a cluster builds it, for the fast suite's metrics tests
(tests/) and the end-to-end autoscaling suite (e2e/): the Debian `prometheus` binary with a temporary TSDB
(`server.py`), the scrape configs prometheus-operator generates from a ServiceMonitor (`scrape.py`), and DCGM series
labelled exactly as dcgm-exporter labels them (`dcgm.py`).
"""
