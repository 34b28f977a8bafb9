"""`helenus server --config`: Cassandra's key names, clear errors naming the key, ignored keys
logged once, and a node that starts with no configuration at all."""
import os
import socket
import subprocess
import tempfile
import time

import pytest

from helenus_node import BIN, Node, free_port


def run_with(yaml_text, timeout=20):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "cassandra.yaml")
        with open(path, "w") as f:
            f.write(yaml_text)
        return subprocess.run([BIN, "server", "--config", path], capture_output=True, text=True, timeout=timeout, cwd=d)


def test_invalid_value_is_an_error_naming_the_key():
    out = run_with("native_transport_max_frame_size: 16MB\n")
    assert out.returncode != 0
    assert "native_transport_max_frame_size" in out.stderr and "16MB" in out.stderr


def test_unknown_key_is_refused_like_cassandra():
    out = run_with("no_such_setting: 1\n")
    assert out.returncode != 0
    assert "no_such_setting" in out.stderr


def test_other_partitioners_are_refused():
    out = run_with("partitioner: org.apache.cassandra.dht.RandomPartitioner\n")
    assert out.returncode != 0 and "partitioner" in out.stderr


def test_settings_helenus_does_not_use_are_logged_once():
    node = Node(extra_yaml="disk_access_mode: mmap_index_only\ntrickle_fsync: false\n").start()
    try:
        time.sleep(0.2)
        lines = [l for l in node.log().splitlines() if "ignored" in l]
        assert len(lines) == 1
        assert "disk_access_mode" in lines[0] and "trickle_fsync" in lines[0]
    finally:
        node.cleanup()


def test_no_config_runs_on_9042_with_data_under_cwd():
    try:
        socket.create_connection(("127.0.0.1", 9042), timeout=0.2).close()
        pytest.skip("something already listens on 127.0.0.1:9042")
    except OSError:
        pass
    with tempfile.TemporaryDirectory() as d:
        proc = subprocess.Popen([BIN, "server"], cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 20
            while time.time() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", 9042), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.05)
            else:
                raise AssertionError("no listener on 9042")
            assert os.path.isdir(os.path.join(d, "data", "commitlog"))
        finally:
            proc.terminate()
            assert proc.wait(timeout=20) == 0


def test_commitlog_sync_batch_is_accepted():
    port = free_port()
    node = Node(port=port, extra_yaml="commitlog_sync: batch\n").start()
    node.cleanup()


@pytest.mark.parametrize("yaml_text, setting", [
    ("client_encryption_options:\n  enabled: true\n  keystore: conf/.keystore\n", "client_encryption_options.enabled"),
    ("server_encryption_options:\n  internode_encryption: all\n", "server_encryption_options.internode_encryption"),
    ("authenticator: PasswordAuthenticator\n", "authenticator"),
    ("authorizer: CassandraAuthorizer\n", "authorizer"),
    ("role_manager: com.example.LdapRoleManager\n", "role_manager"),
    ("transparent_data_encryption_options:\n  enabled: true\n", "transparent_data_encryption_options.enabled"),
    ("audit_logging_options:\n  enabled: true\n", "audit_logging_options.enabled"),
    ("native_transport_port_ssl: 9142\n", "native_transport_port_ssl"),
    ("incremental_backups: true\n", "incremental_backups"),
])
def test_settings_helenus_cannot_honour_refuse_to_start(yaml_text, setting):
    out = run_with(yaml_text)
    assert out.returncode == 2, out.stderr
    errors = [l for l in out.stderr.splitlines() if l.startswith("helenus: ")]
    assert len(errors) == 1 and f" for {setting}: " in errors[0] and "Helenus" in errors[0], out.stderr


def test_stock_security_settings_start_and_are_not_reported_as_ignored():
    node = Node(extra_yaml="client_encryption_options:\n  enabled: false\n  keystore: conf/.keystore\n"
                           "server_encryption_options:\n  internode_encryption: none\n"
                           "audit_logging_options:\n  enabled: false\n"
                           "role_manager: CassandraRoleManager\n").start()
    try:
        assert not [l for l in node.log().splitlines() if "ignored" in l]
    finally:
        node.cleanup()
