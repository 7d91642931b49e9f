"""examples/kubernetes: the manifests validate against the Kubernetes API schemas (kubernetes-validate,
offline: it ships them), hang together (names, ports, probes, options the driver knows), the
Dockerfile builds the project as the README says, and the pieces it runs work here: `aeron-async
ready` (the probes) and app.py (the publisher and subscriber)."""

from __future__ import annotations

import contextlib
import copy
import io
import os
import pathlib
import re
import shlex
import stat
import subprocess
import sys
import tomllib
from typing import Any, Iterator

import kubernetes_validate
import pytest
import yaml

import aeron_async
from aeron_async import cli
from aeron_async.context import native_options
from conftest import REPO, TEST_DRIVER_SETTINGS, python_env

K8S = os.path.join(REPO, "examples", "kubernetes")
KUBERNETES_VERSION = "1.33"  # native sidecars (initContainers with restartPolicy: Always) are GA from 1.33
MANIFESTS = ("drivers.yaml", "publisher.yaml", "subscriber.yaml")


def documents(name: str) -> list[dict[str, Any]]:
    with open(os.path.join(K8S, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def all_documents() -> list[dict[str, Any]]:
    return [d for name in MANIFESTS for d in documents(name)]


def pod_containers(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    spec = doc["spec"]["template"]["spec"]
    yield from spec.get("initContainers", [])
    yield from spec["containers"]


def workloads() -> list[dict[str, Any]]:
    return [d for d in all_documents() if d["kind"] in ("StatefulSet", "Deployment")]


def env_of(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value", "<from downward API>") for e in container.get("env", [])}


def expand(value: str, env: dict[str, str]) -> str:
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env[m.group(1)], value)


def test_every_manifest_validates_against_the_api_schemas() -> None:
    kinds = []
    for name in MANIFESTS:
        for doc in documents(name):
            assert kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True) == KUBERNETES_VERSION
            kinds.append(doc["kind"])
    assert sorted(kinds) == ["Deployment", "Deployment", "Service", "StatefulSet"]
    # the check bites: a misspelt field and a wrong type are refused (strict schemas)
    sts = next(d for d in all_documents() if d["kind"] == "StatefulSet")
    bad = copy.deepcopy(sts)
    bad["spec"]["template"]["spec"]["containers"][0]["readinessProbes"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, KUBERNETES_VERSION, strict=True)
    bad = copy.deepcopy(sts)
    bad["spec"]["replicas"] = "three"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, KUBERNETES_VERSION, strict=True)


def test_drivers_gossip_through_pod_zero_of_the_headless_service() -> None:
    service = next(d for d in all_documents() if d["kind"] == "Service")
    sts = next(d for d in all_documents() if d["kind"] == "StatefulSet")
    assert service["spec"]["clusterIP"] == "None" and service["spec"]["publishNotReadyAddresses"] is True
    assert sts["spec"]["serviceName"] == service["metadata"]["name"]
    assert service["spec"]["selector"].items() <= sts["spec"]["template"]["metadata"]["labels"].items()
    resolver_port = next(p["port"] for p in service["spec"]["ports"] if p["name"] == "resolver")
    pod0 = f"{sts['metadata']['name']}-0.{service['metadata']['name']}.$(POD_NAMESPACE).svc.cluster.local:{resolver_port}"
    for workload in workloads():
        driver = next(c for c in pod_containers(workload) if c.get("args", [])[:1] == ["driver"])
        env = env_of(driver)
        fields = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in driver["env"] if "valueFrom" in e}
        assert fields == {"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace", "POD_IP": "status.podIP"}
        assert env["AERON_DRIVER_RESOLVER_BOOTSTRAP_NEIGHBOR"] == pod0, workload["metadata"]["name"]
        assert env["AERON_DRIVER_RESOLVER_INTERFACE"] == f"$(POD_IP):{resolver_port}"
        assert env["AERON_DIR"] == "/dev/shm/aeron"
        # a $(VAR) reference expands only from variables defined before it in the same container
        names = [e["name"] for e in driver["env"]]
        for i, e in enumerate(driver["env"]):
            for ref in re.findall(r"\$\(([A-Za-z_0-9]+)\)", e.get("value", "")):
                assert ref in names[:i], f"{e['name']} refers to {ref}, not defined before it"
    sts_driver = next(c for c in pod_containers(sts) if c.get("args", [])[:1] == ["driver"])
    assert env_of(sts_driver)["AERON_DRIVER_RESOLVER_NAME"] == "$(POD_NAME)"


def test_the_publisher_names_the_subscribers_driver() -> None:
    by_name = {d["metadata"]["name"]: d for d in workloads()}
    sub, pub = by_name["subscriber"], by_name["publisher"]
    sub_driver = next(c for c in pod_containers(sub) if c.get("args", [])[:1] == ["driver"])
    sub_name = env_of(sub_driver)["AERON_DRIVER_RESOLVER_NAME"]
    assert sub["spec"]["replicas"] == 1 and sub["spec"]["strategy"]["type"] == "Recreate"  # one driver per name
    sub_app, pub_app = (next(c for c in w["spec"]["template"]["spec"]["containers"] if c["name"] == "app")
                        for w in (sub, pub))
    sub_port = re.search(r"endpoint=[^|:]+:(\d+)", env_of(sub_app)["AERON_CHANNEL"]).group(1)  # type: ignore[union-attr]
    assert env_of(pub_app)["AERON_CHANNEL"] == f"aeron:udp?endpoint={sub_name}:{sub_port}"
    pub_driver = next(c for c in pod_containers(pub) if c.get("args", [])[:1] == ["driver"])
    assert env_of(pub_driver)["AERON_NAME_RESOLUTION_PENDING_ALLOWED"] == "true"  # before gossip brings the name
    assert any(p["containerPort"] == int(sub_port) and p["protocol"] == "UDP" for p in sub_app["ports"])
    for w in (sub, pub):
        init = w["spec"]["template"]["spec"]["initContainers"]
        assert [c["name"] for c in init if "restartPolicy" not in c] == ["resolver-key"] == [init[0]["name"]]
        sidecars = init[1:]
        assert all(c["restartPolicy"] == "Always" for c in sidecars)  # native sidecars: started before the app
        assert "startupProbe" in sidecars[0] and sidecars[0]["args"] == ["driver"]


def test_every_container_shares_the_memory_volume_and_runs_a_real_command() -> None:
    parser_commands = set()
    for workload in workloads():
        spec = workload["spec"]["template"]["spec"]
        assert {"name": "aeron-shm", "emptyDir": {"medium": "Memory", "sizeLimit": "512Mi"}} in spec["volumes"]
        for c in pod_containers(workload):
            if c["name"] == "resolver-key":
                continue  # the key's copy, before the driver (test_drivers_gossip_signed_from_private_networks)
            assert {"name": "aeron-shm", "mountPath": "/dev/shm"} in [
                {k: v for k, v in m.items() if k != "readOnly"} for m in c["volumeMounts"]], c["name"]
            if "args" in c:
                parser_commands.add(c["args"][0])
            for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
                if probe in c:
                    assert c[probe]["exec"]["command"][:2] == ["aeron-async", "ready"]
                    assert c[probe]["exec"]["command"][2:4] == ["--aeron-dir", "/dev/shm/aeron"]
            if c["name"] == "app":
                assert c["command"][:2] == ["python", "/opt/aeron-async/app.py"]
    assert parser_commands == {"driver", "exporter"}
    for command in sorted(parser_commands | {"ready"}):  # each is a subcommand of aeron-async
        with pytest.raises(SystemExit) as exit_info, contextlib.redirect_stdout(io.StringIO()):
            cli.main([command, "--help"])
        assert exit_info.value.code == 0, f"aeron-async has no subcommand {command!r}"


def test_drivers_gossip_signed_from_private_networks(tmp_path: pathlib.Path) -> None:
    """docs/kubernetes.md, Gossip: every driver signs its gossip with the key of one Secret (mode 0400),
    copied owner-only for the image's user by the resolver-key init container, and takes frames from
    private networks only."""
    user = next(arg for op, arg in dockerfile_instructions() if op == "USER")
    uid, gid = (int(x) for x in user.split(":"))
    copies = set()
    for workload in workloads():
        spec = workload["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in spec["volumes"]}
        assert volumes["resolver-secret"]["secret"] == {"secretName": "aeron-resolver-key", "defaultMode": 0o400}
        assert volumes["resolver-key"]["emptyDir"]["medium"] == "Memory"
        copy_step = spec["initContainers"][0]
        assert copy_step["name"] == "resolver-key" and "restartPolicy" not in copy_step  # done before the driver
        assert copy_step["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["CHOWN"]}
        mounts = {m["name"]: m["mountPath"] for m in copy_step["volumeMounts"]}
        assert mounts == {"resolver-secret": "/etc/aeron-resolver-secret", "resolver-key": "/run/aeron-resolver"}
        copies.add(copy_step["command"][2])
        driver = next(c for c in pod_containers(workload) if c.get("args", [])[:1] == ["driver"])
        env = env_of(driver)
        assert env["AERON_DRIVER_RESOLVER_HMAC_KEY_FILE"] == "/run/aeron-resolver/key"
        assert {"name": "resolver-key", "mountPath": "/run/aeron-resolver", "readOnly": True} in driver["volumeMounts"]
        networks = env["AERON_DRIVER_RESOLVER_ALLOWED_NETWORKS"]
        aeron_async.DriverContext(driver_resolver_allowed_networks=networks)._to_native()  # a list the driver takes
        assert networks == "10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fd00::/8"
    (command,) = copies  # the same step everywhere
    assert command.startswith("umask 0377 && ")
    # the step itself, on paths of the test: the copy is 0400 and belongs to the image's user
    secret, key_dir = tmp_path / "secret", tmp_path / "run"
    secret.mkdir()
    key_dir.mkdir()
    (secret / "key").write_bytes(os.urandom(32))
    (secret / "key").chmod(0o400)
    local = command.replace("/etc/aeron-resolver-secret", str(secret)).replace("/run/aeron-resolver", str(key_dir))
    assert f"chown {uid}:{gid} " in local
    for _ in range(2):  # and again over the first copy, as when the pod's init containers run again
        subprocess.run(["sh", "-c", local], check=True, timeout=30)
        st = os.stat(key_dir / "key")
        assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == (0o400, uid, gid)
        assert (key_dir / "key").read_bytes() == (secret / "key").read_bytes()


def test_driver_environment_variables_are_driver_options() -> None:
    known = {env for env, *_ in native_options()}
    for workload in workloads():
        for c in pod_containers(workload):
            if c.get("args", [])[:1] == ["driver"]:
                aeron = {name for name in env_of(c) if name.startswith("AERON_")}
                unknown = aeron - known
                assert not unknown, f"{workload['metadata']['name']}: the driver has no options {sorted(unknown)}"


def dockerfile_instructions() -> list[tuple[str, str]]:
    with open(os.path.join(K8S, "Dockerfile")) as f:
        text = re.sub(r"\\\n", " ", f.read())
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_the_dockerfile_builds_the_project_as_the_readme_says() -> None:
    with open(os.path.join(REPO, "README.md")) as f:
        readme = f.read()
    with open(os.path.join(REPO, "dev")) as f:
        dev = f.read()
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as fb:
        pyproject = tomllib.load(fb)
    steps = dockerfile_instructions()
    # the README's Python: "Python 3.11 or newer"; the image's base is a CPython at least that new
    least = tuple(int(x) for x in re.search(r"Python (\d+)\.(\d+) or newer", readme).groups())  # type: ignore[union-attr]
    base = next(arg for op, arg in steps if op == "FROM")
    version = re.fullmatch(r"python:(\d+)\.(\d+)-slim-\w+", base)
    assert version and tuple(map(int, version.groups())) >= least, base
    # the build tools `./dev setup` installs (less the tests' tools: iproute2 and nftables for the
    # namespace tests, prometheus for promtool, tmux for the live stat view's terminal)
    test_tools = {"iproute2", "nftables", "prometheus", "tmux"}
    dev_packages = set(re.search(r"for pkg in ([^;]+);", dev).group(1).split()) - test_tools  # type: ignore[union-attr]
    runs = [shlex.split(arg) for op, arg in steps if op == "RUN"]
    apt = next(words for words in runs if "apt-get" in words and "install" in words)
    installed = {w for w in apt[apt.index("install") + 1:] if not w.startswith("-") and w not in ("&&",)}
    installed = {w for w in installed if re.fullmatch(r"[a-z0-9][a-z0-9.+-]*", w)} - {"rm"}
    assert dev_packages == {"gcc", "make"} and dev_packages <= installed
    # README: `pip install <checkout or wheel>`; the image copies the checkout and pip-installs it
    # (not editable), with extras the project declares
    assert "`pip install <checkout or wheel>`" in readme
    copy_src = next(arg.split() for op, arg in steps if op == "COPY" and arg.split()[0] == ".")
    checkout = copy_src[1]
    pip = next(words for words in runs if words[:2] == ["pip", "install"])
    target = pip[-1]
    assert "-e" not in pip and "--editable" not in pip
    match = re.fullmatch(re.escape(checkout) + r"(?:\[([a-z,]+)\])?", target)
    assert match, f"pip installs {target!r}, not the checkout copied to {checkout}"
    for extra in (match.group(1) or "").split(","):
        if extra:
            assert extra in pyproject["project"]["optional-dependencies"], f"the project declares no extra {extra!r}"
    # the entry point is the project's script, and what the image copies exists
    assert next(arg for op, arg in steps if op == "ENTRYPOINT") == '["aeron-async"]'
    assert "aeron-async" in pyproject["project"]["scripts"]
    for op, arg in steps:
        if op == "COPY" and arg.split()[0] != ".":
            assert os.path.exists(os.path.join(REPO, arg.split()[0])), arg
    # the context's ignore file leaves out the environment and history, never what pip builds from
    with open(os.path.join(K8S, "Dockerfile.dockerignore")) as f:
        ignored = [p.strip() for p in f if p.strip() and not p.startswith("#")]
    assert ".venv" in ignored and ".git" in ignored
    needed = ["pyproject.toml", "setup.py", "README.md", "aeron_async", "_native", "media", "protocols"]
    assert pyproject["project"]["readme"] == "README.md"
    for pattern in ignored:
        for path in needed:
            assert not (pattern == path or pattern.rstrip("/") == path), f"{pattern} hides {path} from the build"


def test_ready_checks_the_driver_heartbeat(aeron_dir: str) -> None:
    def ready(*extra: str) -> tuple[int, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(["ready", "--aeron-dir", aeron_dir, *extra])
        return code, out.getvalue() + err.getvalue()

    code, text = ready()
    assert code == 1 and "no media driver" in text and aeron_dir in text
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **{**TEST_DRIVER_SETTINGS, "dir_delete_on_shutdown": False}):
        code, text = ready()
        assert code == 0 and "is alive" in text, text
        assert ready("--quiet") == (0, "")
        code, text = ready("--max-age", "0")
        assert code == 2 and "--max-age" in text
    code, text = ready()
    assert code == 1 and "has closed" in text, text


def test_ready_names_the_directory_of_aeron_dir(aeron_dir: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With $AERON_DIR (a pod's environment) and no --aeron-dir, the answer names that directory."""
    monkeypatch.setenv("AERON_DIR", aeron_dir)
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert cli.main(["ready"]) == 0
    assert f"in {aeron_dir} is alive" in out.getvalue(), out.getvalue()
    assert "default" not in out.getvalue()


def test_app_publishes_and_subscribes_through_the_pods_driver(aeron_dir: str) -> None:
    app = os.path.join(K8S, "app.py")
    env = {**python_env(), "AERON_DIR": aeron_dir, "AERON_CHANNEL": "aeron:ipc", "AERON_STREAM": "77"}
    with aeron_async.MediaDriver.launch(aeron_dir=aeron_dir, **TEST_DRIVER_SETTINGS):
        sub = subprocess.Popen([sys.executable, app, "subscribe", "--count", "30"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            assert "subscribed to aeron:ipc stream 77" in (sub.stdout.readline() if sub.stdout else "")
            pub = subprocess.run([sys.executable, app, "publish", "--count", "30", "--rate", "1000"], env=env,
                                 capture_output=True, text=True, timeout=60)
            assert pub.returncode == 0 and "published 30 messages" in pub.stdout, pub.stdout + pub.stderr
            out, _ = sub.communicate(timeout=60)
        finally:
            if sub.poll() is None:
                sub.kill()
                sub.communicate()
    assert sub.returncode == 0 and "received 30 messages" in out and "message 29 from" in out, out
    bad = subprocess.run([sys.executable, app, "publish"], env={**env, "AERON_CHANNEL": ""},
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "name the channel" in bad.stderr
