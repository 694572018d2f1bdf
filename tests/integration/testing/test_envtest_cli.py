"""``crdkit envtest run`` and ``crdkit envtest up`` as a user runs them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from _crdkit_process import CRDKIT, crdkit

from crdkit.testing import crd_manifest
from crdkit.testing.envtest import _http

pytestmark = pytest.mark.integration


# Run as CMD: proves KUBECONFIG reaches it and points at a live apiserver, then exits with 7.
PROBE = textwrap.dedent(
    """
    import base64, os, ssl, sys, tempfile, urllib.request, yaml
    path = os.environ["KUBECONFIG"]
    config = yaml.safe_load(open(path))
    cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
    tmp = tempfile.mkdtemp()
    files = {}
    for key in ("certificate-authority-data", "client-certificate-data", "client-key-data"):
        files[key] = os.path.join(tmp, key)
        open(files[key], "wb").write(base64.b64decode(cluster.get(key) or user[key]))
    tls = ssl.create_default_context(cafile=files["certificate-authority-data"])
    tls.load_cert_chain(files["client-certificate-data"], files["client-key-data"])
    url = cluster["server"] + (sys.argv[1] if len(sys.argv) > 1 else "/readyz")
    body = urllib.request.urlopen(url, context=tls).read()
    print(path, cluster["server"], "ok" if len(sys.argv) > 1 else body.decode())
    sys.exit(7)
    """
)


def _refused(server: str) -> bool:
    try:
        _http.request("GET", server.replace("https://", "http://") + "/readyz", timeout=2)
    except ConnectionRefusedError:
        return True
    except OSError:
        return False
    return False


def test_run_passes_kubeconfig_and_exit_status() -> None:
    done = subprocess.run(
        [CRDKIT, "envtest", "run", "--", sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert done.returncode == 7, done.stderr
    kubeconfig, server, ready = done.stdout.split()
    assert ready == "ok"
    assert not Path(kubeconfig).exists()  # the temporary folder went with the control plane
    assert _refused(server)


def test_run_installs_crds_first(tmp_path: Path) -> None:
    crd = crd_manifest("demo.crdkit.dev", "Sprocket", {"type": "object"})
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "sprocket.yaml").write_text(yaml.safe_dump(crd))
    # The probe fails (urllib raises on 404) unless the CRD is already served.
    probe = [sys.executable, "-c", PROBE, "/apis/demo.crdkit.dev/v1/sprockets"]
    done = subprocess.run(
        [CRDKIT, "envtest", "run", "--crds", str(tmp_path / "crds"), "--", *probe],
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert done.returncode == 7, done.stderr


def test_run_reports_a_signal_like_a_shell() -> None:
    done = subprocess.run(
        [CRDKIT, "envtest", "run", "--", "sh", "-c", "kill -TERM $$"],
        capture_output=True,
        timeout=100,
        check=False,
    )
    assert done.returncode == 128 + signal.SIGTERM


# Run as CMD: reports where the control plane is, then exits 5 on SIGTERM.
PATIENT = textwrap.dedent(
    """
    import os, signal, sys, time
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(5))
    print(os.environ["KUBECONFIG"], flush=True)
    time.sleep(60)
    """
)


def test_run_forwards_sigterm_to_the_command_and_cleans_up() -> None:
    with crdkit("envtest", "run", "--", sys.executable, "-c", PATIENT, stderr=False) as run:
        assert run.stdout is not None
        kubeconfig = Path(run.stdout.readline().strip())
        server = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        run.send_signal(signal.SIGTERM)
        assert run.wait(timeout=30) == 5
        assert _refused(server)
        assert not kubeconfig.exists()


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM], ids=["int", "term"])
def test_up_serves_until_interrupted(tmp_path: Path, stop_signal: signal.Signals) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    # A file already there, world-readable and hard-linked elsewhere: it must be replaced by a
    # new owner-only file, not written into (which would hand the other name the admin key).
    kubeconfig.write_text("old")
    kubeconfig.chmod(0o644)
    os.link(kubeconfig, tmp_path / "other-name")
    with crdkit("envtest", "up", "--kubeconfig", str(kubeconfig)) as up:
        assert up.stdout is not None
        lines = []
        for line in up.stdout:
            lines.append(line)
            if "Ctrl-C" in line:
                break
        output = "".join(lines)
        assert f"kubeconfig: {kubeconfig}" in output
        assert kubeconfig.stat().st_mode & 0o077 == 0
        assert (tmp_path / "other-name").read_text() == "old"
        assert "kubectl get namespaces" in output
        server = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        assert server in output
        assert not _refused(server)
        up.send_signal(stop_signal)
        # Stopping may use both processes' grace periods (10 s each, then SIGKILL) when the
        # machine is loaded; a hang would still exceed this.
        assert up.wait(timeout=60) == 0
        assert _refused(server)


def test_up_refuses_a_kubeconfig_path_that_is_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_text("keep")
    link = tmp_path / "kubeconfig"
    link.symlink_to(target)
    with crdkit("envtest", "up", "--kubeconfig", str(link)) as up:
        # Refused before anything starts; a control plane would run until interrupted.
        _, stderr = up.communicate(timeout=60)
    assert up.returncode == 2, stderr
    assert stderr.strip().splitlines() == [
        f"Error: --kubeconfig {link}: is a symbolic link; refusing to write through it"
    ]
    assert target.read_text() == "keep"
    assert link.is_symlink()
