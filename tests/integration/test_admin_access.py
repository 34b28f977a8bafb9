"""The admin API is not a door: requests a web page could send (a foreign Host, an Origin
header, a form's content type) are refused with a JSON error before anything runs, a configured
token is required, and `helenus nodetool` still works (it names the address it connected to and
sends the token)."""
import http.client
import json
import os
import subprocess

import pytest

from helenus_node import BIN, Node


def call(node, method, path, headers, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", node.admin_port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        payload = body.encode() if body is not None else b""
        conn.putheader("Content-Length", str(len(payload)))
        conn.endheaders(payload)
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"null"), response.getheader("WWW-Authenticate")
    finally:
        conn.close()


def nodetool(node, *args, env=None):
    return subprocess.run([BIN, "nodetool", "-p", str(node.admin_port), *args],
                          capture_output=True, text=True, timeout=60, env=env)


@pytest.fixture(scope="module")
def node():
    n = Node().start()
    yield n
    n.cleanup()


def own_host(node):
    return f"127.0.0.1:{node.admin_port}"


def test_requests_a_web_page_could_send_are_refused(node):
    status, body, _ = call(node, "GET", "/v1/node", {"Host": f"attacker.example:{node.admin_port}"})
    assert status == 403 and "does not name this admin API" in body["error"]
    status, body, _ = call(node, "POST", "/v1/stopdaemon",
                           {"Host": own_host(node), "Origin": "http://attacker.example",
                            "Content-Type": "application/json"}, "{}")
    assert status == 403 and "Origin" in body["error"]
    status, body, _ = call(node, "POST", "/v1/stopdaemon",
                           {"Host": own_host(node), "Content-Type": "text/plain"}, "{}")
    assert status == 415 and "application/json" in body["error"]
    status, body, _ = call(node, "POST", "/v1/flush", {"Host": own_host(node)}, "")
    assert status == 415
    assert node.proc.poll() is None, "the node is still running"


def test_its_own_address_and_localhost_are_served(node):
    for host in (own_host(node), f"localhost:{node.admin_port}"):
        status, body, _ = call(node, "GET", "/v1/version", {"Host": host})
        assert (status, body["release_version"]) == (200, "5.0.4")
    status, body, _ = call(node, "POST", "/v1/flush",
                           {"Host": own_host(node), "Content-Type": "application/json"}, "{}")
    assert status == 200, body
    result = nodetool(node, "version")
    assert result.returncode == 0 and result.stdout == "ReleaseVersion: 5.0.4\n", result.stderr


def test_a_configured_token_is_required_and_nodetool_sends_it(tmp_path):
    token_file = tmp_path / "admin.token"
    token_file.write_text("c0ffee-0123456789\n")
    os.chmod(token_file, 0o600)
    node = Node(extra_yaml=f"admin_auth_token_file: {token_file}\n").start()
    try:
        status, body, challenge = call(node, "GET", "/v1/version", {"Host": own_host(node)})
        assert (status, challenge) == (401, "Bearer") and "token" in body["error"]
        status, _, _ = call(node, "GET", "/metrics",
                            {"Host": own_host(node), "Authorization": "Bearer wrong"})
        assert status == 401
        status, _, _ = call(node, "GET", "/v1/version",
                            {"Host": own_host(node), "Authorization": "Bearer c0ffee-0123456789"})
        assert status == 200
        refused = nodetool(node, "version")
        assert refused.returncode == 2 and "requires a token" in refused.stderr
        with_option = nodetool(node, "--token-file", str(token_file), "version")
        assert with_option.returncode == 0, with_option.stderr
        env = dict(os.environ, HELENUS_ADMIN_TOKEN_FILE=str(token_file))
        with_env = nodetool(node, "info", env=env)
        assert with_env.returncode == 0 and "Native Transport active: true" in with_env.stdout, with_env.stderr
    finally:
        node.cleanup()


def test_an_unreadable_token_file_stops_the_node_at_start(tmp_path):
    node = Node(extra_yaml=f"admin_auth_token_file: {tmp_path / 'missing.token'}\n")
    with pytest.raises(RuntimeError, match="exited with 2"):
        node.start()
    assert "cannot read admin_auth_token_file" in node.log()
    node.cleanup()
