"""Fixtures: a running helenus node and driver sessions (protocol v4 and v5)."""
import os
import subprocess
import sys

import pytest
from cassandra.cluster import Cluster
from cassandra.policies import RoundRobinPolicy

from cluster import LocalCluster
from helenus_node import Node


# The cluster modules that move data between nodes (about 40% of the cluster modules' time):
# their own group, so that the two workers share the clusters (test.sh).
MOVING_DATA = {"test_moving_data", "test_lifecycle_safety", "test_lifecycle_kills", "test_streaming"}


def _xdist_group(module, items):
    """Which pytest-xdist group runs a module's tests (test.sh: `-n 2 --dist loadgroup`).

    Modules that start clusters are in two groups, "cluster" and "cluster-moving" (MOVING_DATA),
    so that at most two clusters of debug nodes run at once on a 2-core machine, each on its
    own 127.0.N.0/24 (cluster.py); without the split one worker ran every cluster module, most
    of the suite's time, while the other waited. Modules that compare with the reference
    Cassandra share another group (one Cassandra, started once); every other module is its own
    group, so its module-scoped node is started once."""
    if any("trio" in item.fixturenames for item in items) or hasattr(module, "LocalCluster"):
        short = module.__name__.rsplit(".", 1)[-1]
        return "cluster-moving" if short in MOVING_DATA else "cluster"
    if any("reference" in item.fixturenames for item in items):
        return "refcass"
    return module.__name__


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    by_module = {}
    for item in items:
        by_module.setdefault(item.module, []).append(item)
    for module, module_items in by_module.items():
        group = _xdist_group(module, module_items)
        for item in module_items:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="module")
def node():
    n = Node().start()
    yield n
    n.cleanup()


@pytest.fixture(scope="module")
def trio():
    """A 3-node `helenus cluster` shared by a module's tests."""
    cluster = LocalCluster(nodes=3).start()
    try:
        yield cluster
    finally:
        cluster.clear()


def connect(node, protocol_version=5, **kw):
    cluster = Cluster(
        [node.addr], port=node.port, protocol_version=protocol_version,
        load_balancing_policy=RoundRobinPolicy(), connect_timeout=10, **kw,
    )
    return cluster, cluster.connect()


@pytest.fixture(scope="module", params=[4, 5], ids=["v4", "v5"])
def session(request, node):
    cluster, sess = connect(node, protocol_version=request.param)
    yield sess
    cluster.shutdown()


def cqlsh(node, command):
    """Runs cqlsh (from the test venv) against `node` with `-e command`; its stdout."""
    exe = os.path.join(os.path.dirname(sys.executable), "cqlsh")
    out = subprocess.run([exe, node.addr, str(node.port), "-e", command],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout
