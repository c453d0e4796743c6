"""KEDA's operator and metrics adapter as local processes, standing in for the pods the keda chart deploys.

Under kwok the chart's pods are scheduled and marked Ready but never run, so nothing would reconcile ScaledObjects
(no HPA, no finalizer) and KEDA's `external.metrics.k8s.io` APIService would stay unavailable, which blocks every
namespace deletion on discovery (kubernetes/kubernetes#60807; helm/helm#6361). The real KEDA binaries run here
instead, configured as the chart configures its pods (keda 2.20.2 templates/manager/deployment.yaml and
templates/metrics-server/deployment.yaml), with three differences a local process needs:
- the operator writes its certificates to the `kedaorg-certs` Secret and exits to be restarted with them mounted
  (cert rotation); here the Secret's files are written to a directory and the operator is started again;
- the adapter is reached at the chart's Service: its ClusterIP is added to the loopback interface of the network
  namespace the tests run in (scripts/lib-netns.sh), and the adapter listens on the Service's port there;
- the adapter dials the operator's gRPC metrics service on 127.0.0.1, with the certificate's in-cluster name as
  authority.
And they live as long as the chart's operator Deployment does: when a destroy (or an upgrade that removes it)
deletes it, they stop, as its pods would, so a destroy that deletes ScaledObjects after KEDA hangs here as it
would on a real cluster (their finalizer needs a running operator).
"""

from __future__ import annotations

import base64
import json
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

from e2e.harness import Kube, wait_for
from stacknames import KEDA_NAMESPACE

OPERATOR = "keda-operator"
ADAPTER_SERVICE = "keda-operator-metrics-apiserver"
CERT_SECRET = "kedaorg-certs"
APISERVICE = "v1beta1.external.metrics.k8s.io"
GRPC_PORT = 9666


@dataclass
class LocalKeda:
    kube: Kube
    workdir: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    _stopped: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def certs(self) -> Path:
        return self.workdir / "certs"

    def env(self) -> dict[str, str]:
        return {**self.kube.env(), "WATCH_NAMESPACE": "", "POD_NAMESPACE": KEDA_NAMESPACE,
                "KEDA_CLUSTER_OBJECT_NAMESPACE": KEDA_NAMESPACE, "OPERATOR_NAME": OPERATOR,
                "KEDA_HTTP_DISABLE_KEEP_ALIVE": "true"}

    def _start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = (self.workdir / f"{name}.log").open("ab")
        proc = subprocess.Popen([str(self.kube.tc.bin / name), *args], env=self.env(), stdout=log,
                                stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def operator_args(self, metrics_port: int = 18080) -> list[str]:
        return ["--leader-elect=false", f"--kubeconfig={self.kube.kubeconfig}", "--zap-log-level=info",
                "--enable-webhook-patching=true", "--enable-apiservice-patching=true",
                f"--cert-dir={self.certs}", "--enable-cert-rotation=true", f"--cert-secret-name={CERT_SECRET}",
                f"--operator-service-name={OPERATOR}", f"--metrics-server-service-name={ADAPTER_SERVICE}",
                "--webhooks-service-name=keda-admission-webhooks", "--k8s-cluster-domain=cluster.local",
                f"--metrics-bind-address=127.0.0.1:{metrics_port}", "--health-probe-bind-address=127.0.0.1:18081",
                f"--metrics-service-bind-address=127.0.0.1:{GRPC_PORT}"]

    def _write_certs(self) -> bool:
        secret = self.kube.run("get", "secret", CERT_SECRET, "-n", KEDA_NAMESPACE, "-o", "json", check=False)
        if secret.returncode != 0:
            return False
        data = json.loads(secret.stdout).get("data", {})
        if not {"ca.crt", "tls.crt", "tls.key"} <= set(data):
            return False
        self.certs.mkdir(parents=True, exist_ok=True)
        for key in ("ca.crt", "tls.crt", "tls.key"):
            (self.certs / key).write_bytes(base64.b64decode(data[key]))
        return True

    def start(self) -> None:
        """Operator (twice: the first run makes the certificates), then the adapter; waits for the APIService."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.certs.mkdir(exist_ok=True)
        first = self._start("keda-operator", self.operator_args())
        wait_for("KEDA's certificate Secret", self._write_certs, timeout=60)
        try:
            first.wait(timeout=30)  # it exits once it has written the Secret, to be restarted with it mounted
        except subprocess.TimeoutExpired:
            first.terminate()
        self.procs.remove(first)
        self._start("keda-operator", self.operator_args())
        svc = self.kube.get("service", ADAPTER_SERVICE, "-n", KEDA_NAMESPACE)
        ip = svc["spec"]["clusterIP"]
        port = next(p["port"] for p in svc["spec"]["ports"] if p["name"] in ("https", "metricshttps")) \
            if any(p.get("name") in ("https", "metricshttps") for p in svc["spec"]["ports"]) else 443
        subprocess.run(["ip", "addr", "replace", f"{ip}/32", "dev", "lo"], check=True)
        self._start("keda-adapter", [
            f"--secure-port={port}", f"--bind-address={ip}", "--port=18082",
            f"--kubeconfig={self.kube.kubeconfig}", f"--authentication-kubeconfig={self.kube.kubeconfig}",
            f"--authorization-kubeconfig={self.kube.kubeconfig}", f"--lister-kubeconfig={self.kube.kubeconfig}",
            f"--metrics-service-address=127.0.0.1:{GRPC_PORT}",
            f"--metrics-service-grpc-authority={OPERATOR}.{KEDA_NAMESPACE}.svc.cluster.local",
            f"--client-ca-file={self.certs / 'ca.crt'}", f"--tls-cert-file={self.certs / 'tls.crt'}",
            f"--tls-private-key-file={self.certs / 'tls.key'}", f"--cert-dir={self.certs}",
            "--zap-log-level=info",
        ])

        def available() -> bool:
            status = self.kube.get("apiservice", APISERVICE)["status"]
            return any(c["type"] == "Available" and c["status"] == "True" for c in status.get("conditions", []))

        wait_for(f"{APISERVICE} to be Available (logs: {self.workdir})", available, timeout=90)
        threading.Thread(target=self._follow_the_deployment, daemon=True).start()

    def _follow_the_deployment(self) -> None:
        while not self._stopped.wait(1.0):
            probe = self.kube.run("get", "deployment", OPERATOR, "-n", KEDA_NAMESPACE, "--ignore-not-found", "-o",
                                  "name", check=False)
            if probe.returncode == 0 and not probe.stdout.strip():
                self.stop()
                return

    def stop(self) -> None:
        self._stopped.set()
        with self._lock:
            for proc in self.procs:
                proc.terminate()
            for proc in self.procs:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
            self.procs.clear()
