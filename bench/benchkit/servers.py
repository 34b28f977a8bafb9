"""The two servers under test: a `helenus server` process and Apache Cassandra via refcass.

Both offer the same interface: start() (fresh data, measures start-up to the first successful CQL
query), pid, flush(keyspace) (memtables to disk, compactions settled, then a major compaction settled),
data_components(keyspace) (bytes on disk by SSTable component),
peak_rss(), stop(). stop() is safe to call twice and only ever stops what this object started."""
import os
import re
import signal
import subprocess
import time

from . import proc


class ServerError(RuntimeError):
    pass


def _tail(path, n=30):
    try:
        with open(path, "rb") as f:
            return "\n".join(f.read().decode(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def _wait_cql(addr, port, pid, deadline, log_path, what, poll=0.02):
    """Polls the CQL port until a query succeeds; returns (boottime of success, release version)."""
    last = None
    while True:
        if pid is not None and not proc.alive(pid):
            raise ServerError(f"{what} exited during start-up; last lines of {log_path}:\n{_tail(log_path)}")
        try:
            version = proc.cql_probe(addr, port, timeout=2.0)
            return proc.now_boottime(), version
        except (OSError, proc.ProbeError) as e:
            last = e
        if time.monotonic() > deadline:
            raise ServerError(f"{what} gave no CQL answer on {addr}:{port} in time (last error: {last}); "
                              f"see {log_path}")
        time.sleep(poll)


class Helenus:
    name = "helenus"
    label = "Helenus"

    def __init__(self, binary, addr, port, workdir, log, start_timeout=60, settle_quiet=5.0, wrapper=()):
        """`wrapper`: a command the server runs under (e.g. valgrind and its options), none by default."""
        self.binary, self.addr, self.port = binary, addr, port
        self.wrapper = list(wrapper)
        self.dir = os.path.join(workdir, "helenus")
        self.log = log
        self.start_timeout = start_timeout
        self.proc = None
        self.version = None
        self.peak = 0
        self.notes = []
        self._nodetool = None
        self.settle_quiet = settle_quiet
        self.admin_port = None  # a free port, chosen at the first start

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    @property
    def pids(self):
        """The server's processes (one), for CPU readings shared with the clusters of cluster.py."""
        return [self.pid] if self.pid else []

    def _config(self):
        d = self.dir
        path = os.path.join(d, "cassandra.yaml")
        # Defaults apart from addresses, ports and directories.
        with open(path, "w") as f:
            f.write(f"listen_address: {self.addr}\nrpc_address: {self.addr}\n"
                    f"native_transport_port: {self.port}\n"
                    f"admin_address: {self.addr}\nadmin_port: {self.admin_port}\n"
                    f"data_file_directories: [{d}/data]\ncommitlog_directory: {d}/commitlog\n"
                    f"saved_caches_directory: {d}/saved_caches\nhints_directory: {d}/hints\n")
        return path

    def start(self, fresh=True):
        if proc.port_open(self.addr, self.port):
            raise ServerError(f"something already listens on {self.addr}:{self.port}; stop it or pick --helenus-addr")
        if fresh and os.path.exists(self.dir):
            subprocess.run(["rm", "-rf", self.dir], check=True)
        os.makedirs(self.dir, exist_ok=True)
        if self.admin_port is None:
            self.admin_port = proc.free_port(self.addr)
        config = self._config()
        self.log_path = os.path.join(self.dir, "server.log")
        logf = open(self.log_path, "ab")
        self.proc = subprocess.Popen([*self.wrapper, self.binary, "server", "--config", config], stdout=logf,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.dir,
                                     start_new_session=True)
        logf.close()
        started = proc.start_boottime(self.proc.pid)
        ok, version = _wait_cql(self.addr, self.port, self.proc.pid, time.monotonic() + self.start_timeout,
                                self.log_path, "helenus")
        self.version = version
        return ok - started

    def _sample_peak(self):
        if self.proc:
            self.peak = max(self.peak, proc.status_kib(self.proc.pid, "VmHWM") or 0)

    def peak_rss(self):
        self._sample_peak()
        return self.peak

    def stop(self, timeout=60):
        if not self.proc:
            return
        self._sample_peak()
        p = self.proc
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)  # Helenus flushes memtables and syncs the commit log
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.log(f"helenus pid {p.pid} ignored SIGTERM for {timeout}s; sending SIGKILL")
                p.kill()
                p.wait(timeout=10)
        self.proc = None

    def nodetool(self, *args, timeout=120):
        cmd = [self.binary, "nodetool", "-h", self.addr, "-p", str(self.admin_port), *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)

    def has_nodetool(self):
        if self._nodetool is None:
            try:
                r = subprocess.run([self.binary, "nodetool", "help"], capture_output=True, text=True, timeout=30)
                self._nodetool = r.returncode == 0
            except (OSError, subprocess.TimeoutExpired):
                self._nodetool = False
        return self._nodetool

    def flush(self, keyspace, settle_timeout=180):
        """`helenus nodetool flush`, compactions settled, then a major compaction (`nodetool compact`)
        settled, so overwritten rows are merged as they are in Cassandra's count; without nodetool,
        SIGTERM (which flushes) and restart."""
        if self.has_nodetool():
            r = self.nodetool("flush", keyspace)
            if r.returncode == 0:
                settled = self._settle(keyspace, settle_timeout)
                return f"nodetool flush; {settled}; " + self.compact(keyspace, settle_timeout)
            self.log(f"helenus nodetool flush failed ({r.stderr.strip()[:200]}); falling back to a restart")
        self.stop()
        self.start(fresh=False)
        return "SIGTERM (flushes on shutdown) and restart; " + self._settle(keyspace, settle_timeout)

    def compact(self, keyspace, settle_timeout=180):
        """A major compaction of the keyspace's tables (`nodetool compact` returns when it is done)."""
        r = self.nodetool("compact", keyspace, timeout=settle_timeout * 5)
        if r.returncode != 0:
            raise ServerError(f"helenus nodetool compact failed: {r.stderr.strip()[:300]}")
        return "nodetool compact; " + self._settle(keyspace, settle_timeout)

    def _settle(self, keyspace, timeout):
        if self.has_nodetool():
            # polls settle_quiet/2 apart (2 s at most): the smoke run's tiny flushes settle in well under that
            done = _settle_by_compactionstats(lambda: self.nodetool("compactionstats"), timeout,
                                              gap=min(2.0, self.settle_quiet / 2))
            if done:
                return done
        return _settle_by_size(self.data_path(keyspace), timeout, self.settle_quiet)

    def data_path(self, keyspace):
        return os.path.join(self.dir, "data", keyspace)

    def data_components(self, keyspace):
        return proc.dir_components(self.data_path(keyspace))


def compaction_idle(text):
    """True when `nodetool compactionstats` output shows no pending and no active compactions.

    Cassandra 5.0 prints `pending tasks   0` (older versions `pending tasks: 0`) and, while a compaction
    runs, a table headed `id  compaction type  keyspace  table …` and `Active compaction remaining time`."""
    m = re.search(r"^\s*pending tasks\s*:?\s*(\d+)", text, re.M | re.I)
    if not m or int(m.group(1)) != 0:
        return False
    return not re.search(r"^\s*(id\s+)?compaction type\s", text, re.M | re.I) and \
        "active compaction remaining time" not in text.lower()


def _settle_by_compactionstats(run, timeout, gap=2.0):
    """Polls `nodetool compactionstats` until it shows no work twice in a row `gap` seconds apart (a flush
    schedules its compactions asynchronously). None if the command fails."""
    deadline = time.monotonic() + timeout
    idle_before = False
    while True:
        time.sleep(gap)
        r = run()
        if r.returncode != 0:
            return None
        idle = compaction_idle(r.stdout)
        if idle and idle_before:
            return "compactionstats idle"
        idle_before = idle
        if time.monotonic() > deadline:
            return f"compactions still running after {timeout}s"


def _settle_by_size(path, timeout, quiet=5.0):
    """Waits until the directory's size has not changed for `quiet` seconds."""
    deadline = time.monotonic() + timeout
    last, since = proc.dir_bytes(path), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(1)
        now = proc.dir_bytes(path)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return f"data size unchanged for {quiet:.0f}s"
    return f"data size still changing after {timeout}s"


class Cassandra:
    name = "cassandra"
    label = "Cassandra"

    def __init__(self, refcass, addr, port, heap, workdir, log, start_timeout=300, jmx_port=None, yaml=None):
        self.refcass, self.addr, self.port, self.heap = refcass, addr, port, heap
        self.yaml = yaml  # extra cassandra.yaml lines (refcass's REFCASS_YAML), e.g. a cluster's seeds
        self.jmx_port = jmx_port  # None: refcass's default (7198 + the address's last byte)
        self.dir = os.path.join(workdir, "cassandra")
        self.log = log
        self.start_timeout = start_timeout
        home = os.environ.get("REFCASS_HOME", os.path.expanduser("~/.cache/refcass"))
        self.run_dir = os.path.join(home, "run", addr)
        self._pid = None
        self.version = None
        self.peak = 0
        self.notes = []

    @property
    def pid(self):
        return self._pid

    @property
    def pids(self):
        return [self._pid] if self._pid else []

    def _refcass(self, *args, timeout=120):
        return subprocess.run([self.refcass, *args], capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def _ours(self, pid):
        return pid is not None and proc.alive(pid) and \
            os.path.join(self.run_dir, "conf", "cassandra.yaml") in proc.cmdline(pid)

    def start(self, fresh=True):
        st = self._refcass("status", "--addr", self.addr, timeout=60)
        if st.returncode == 0:
            raise ServerError(f"a Cassandra node is already running at {self.addr} ({st.stdout.strip()}); "
                              f"this benchmark does not stop nodes it did not start — use another --cassandra-addr")
        if proc.port_open(self.addr, self.port):
            raise ServerError(f"something already listens on {self.addr}:{self.port}")
        os.makedirs(self.dir, exist_ok=True)
        self.log_path = os.path.join(os.path.dirname(self.dir), "refcass-start.log")
        pid_file = os.path.join(self.run_dir, "pid")
        launched = time.time()
        logf = open(self.log_path, "ab")
        args = [self.refcass, "start", "--addr", self.addr, "--port", str(self.port), "--heap", self.heap,
                "--data", os.path.join(self.dir, "data")]
        if self.jmx_port:
            args += ["--jmx-port", str(self.jmx_port)]
        if fresh:
            args.append("--fresh")
        env = {**os.environ, "REFCASS_YAML": self.yaml} if self.yaml else None
        starter = subprocess.Popen(args, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True, env=env)
        logf.close()
        deadline = time.monotonic() + self.start_timeout
        try:
            # refcass writes the java pid as soon as it launches it.
            while True:
                try:
                    if os.path.getmtime(pid_file) >= launched - 1:
                        with open(pid_file) as f:
                            pid = int(f.read().strip())
                        if proc.alive(pid):
                            self._pid = pid
                            break
                except (OSError, ValueError):
                    pass
                if starter.poll() is not None:
                    raise ServerError(f"refcass start exited with {starter.returncode}:\n{_tail(self.log_path)}")
                if time.monotonic() > deadline:
                    raise ServerError(f"refcass start did not launch java in {self.start_timeout}s")
                time.sleep(0.02)
            started = proc.start_boottime(self._pid)
            ok, version = _wait_cql(self.addr, self.port, self._pid, deadline, self.log_path, "cassandra")
            self.version = version
            starter.wait(timeout=60)
            if starter.returncode != 0:
                raise ServerError(f"refcass start exited with {starter.returncode}:\n{_tail(self.log_path)}")
        except BaseException:
            if starter.poll() is None:
                os.killpg(starter.pid, signal.SIGTERM)
            self.stop()
            raise
        return ok - started

    def _sample_peak(self):
        if self._ours(self._pid):
            self.peak = max(self.peak, proc.status_kib(self._pid, "VmHWM") or 0)

    def peak_rss(self):
        self._sample_peak()
        return self.peak

    def stop(self, timeout=90):
        if self._pid is None:
            return
        self._sample_peak()
        pid = self._pid
        try:
            r = self._refcass("stop", "--addr", self.addr, timeout=timeout)
            if r.returncode != 0:
                self.log(f"refcass stop failed: {r.stderr.strip()[:300]}")
        except subprocess.TimeoutExpired:
            self.log("refcass stop timed out")
        if self._ours(pid):
            self.log(f"cassandra pid {pid} still running; sending SIGKILL")
            os.kill(pid, signal.SIGKILL)
        self._pid = None

    def kill(self):
        """SIGKILL the node (no drain), as a crash; start(fresh=False) brings it back with its data."""
        if self._ours(self._pid):
            self._sample_peak()
            os.kill(self._pid, signal.SIGKILL)
            while proc.alive(self._pid):
                time.sleep(0.05)
        self._pid = None

    def flush(self, keyspace, settle_timeout=180):
        """`nodetool flush`, compactions settled, then a major compaction (`nodetool compact`) settled."""
        r = self._refcass("nodetool", "--addr", self.addr, "flush", keyspace, timeout=180)
        if r.returncode != 0:
            raise ServerError(f"nodetool flush failed: {r.stderr.strip()[:300]}")
        settled = self._settle(settle_timeout)
        r = self._refcass("nodetool", "--addr", self.addr, "compact", keyspace, timeout=settle_timeout * 5)
        if r.returncode != 0:
            raise ServerError(f"nodetool compact failed: {r.stderr.strip()[:300]}")
        return f"nodetool flush; {settled}; nodetool compact; " + self._settle(settle_timeout)

    def _settle(self, timeout):
        done = _settle_by_compactionstats(
            lambda: self._refcass("nodetool", "--addr", self.addr, "compactionstats", timeout=120), timeout)
        if not done:
            raise ServerError("nodetool compactionstats failed")
        return done

    def data_path(self, keyspace):
        return os.path.join(self.dir, "data", "data", keyspace)

    def data_components(self, keyspace):
        return proc.dir_components(self.data_path(keyspace))
