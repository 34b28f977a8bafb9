"""Start and stop real `helenus server` processes on loopback for integration tests."""
import os
import signal
import socket
import subprocess
import tempfile
import time

BIN = os.environ.get("HELENUS_BIN", os.path.join(os.path.dirname(__file__), "..", "..", "target", "debug", "helenus"))


def free_port(addr="127.0.0.1"):
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


class Node:
    """One helenus process with its own data directory and native port."""

    def __init__(self, data_dir=None, addr="127.0.0.1", port=None, extra_yaml=""):
        self.owned_dir = None
        if data_dir is None:
            self.owned_dir = tempfile.TemporaryDirectory(prefix="helenus-test-")
            data_dir = self.owned_dir.name
        self.data_dir = data_dir
        self.addr = addr
        self.port = port or free_port(addr)
        self.admin_port = free_port(addr)
        self.extra_yaml = extra_yaml
        self.proc = None
        self.log_path = os.path.join(data_dir, "node.log")

    def config_path(self):
        path = os.path.join(self.data_dir, "cassandra.yaml")
        with open(path, "w") as f:
            f.write(
                f"cluster_name: 'Test Cluster'\n"
                f"listen_address: {self.addr}\n"
                f"rpc_address: {self.addr}\n"
                f"native_transport_port: {self.port}\n"
                f"data_file_directories: [{self.data_dir}/data]\n"
                f"commitlog_directory: {self.data_dir}/commitlog\n"
                f"admin_port: {self.admin_port}\n"
                f"{self.extra_yaml}"
            )
        return path

    def start(self, timeout=30):
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [BIN, "server", "--config", self.config_path()],
            stdout=log, stderr=subprocess.STDOUT, cwd=self.data_dir,
        )
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"helenus exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with socket.create_connection((self.addr, self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"helenus did not open {self.addr}:{self.port}:\n{self.log()}")

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc is None:
            return None
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=timeout)
        self.proc = None
        return code

    def kill9(self):
        return self.stop(signal.SIGKILL)

    def log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")[-4000:]
        except OSError:
            return ""

    def cleanup(self):
        if self.proc is not None:
            self.kill9()
        if self.owned_dir is not None:
            self.owned_dir.cleanup()
