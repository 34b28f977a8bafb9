"""/proc readings (server CPU, RSS, start time), a raw CQL probe, and the machine description."""
import os
import platform
import re
import socket
import struct
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid):
    with open(f"/proc/{pid}/stat") as f:
        data = f.read()
    # The command name may hold spaces and parentheses; fields resume after the last ')'.
    return data[data.rindex(")") + 2:].split()


def cpu_seconds(pid):
    """User + system CPU seconds of a process, all its threads (not its children)."""
    f = _stat_fields(pid)
    return (int(f[11]) + int(f[12])) / CLK_TCK


def system_busy_seconds():
    """CPU seconds all processes on the machine have used since boot (user, nice, system, irq, softirq, steal)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / CLK_TCK


def children_cpu_seconds():
    """CPU seconds of this process's finished children (the client runs, nodetool, refcass)."""
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def start_boottime(pid):
    """When the process started, in seconds on CLOCK_BOOTTIME (field 22 of /proc/PID/stat)."""
    return int(_stat_fields(pid)[19]) / CLK_TCK


def now_boottime():
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def status_kib(pid, key):
    """A `kB` line of /proc/PID/status (VmHWM, VmRSS), in bytes; None if absent."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        return False


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class ProbeError(Exception):
    pass


def _read_exact(f, n):
    b = f.read(n)
    if b is None or len(b) < n:
        raise ProbeError("connection closed")
    return b


def _string(b, p):
    n = struct.unpack(">H", b[p:p + 2])[0]
    return b[p + 2:p + 2 + n].decode(errors="replace"), p + 2 + n


def cql_probe(addr, port, timeout=2.0):
    """STARTUP then `SELECT release_version FROM system.local` over native protocol v4.

    Returns the release version; raises OSError or ProbeError when the node does not answer."""
    values = cql_query(addr, port, "SELECT release_version FROM system.local", timeout)
    return values[0] if values else ""


def cql_query(addr, port, query, timeout=2.0):
    """One CQL statement at consistency ONE over native protocol v4 (STARTUP, then QUERY).

    Returns the first column of every row as text for a SELECT of text columns, [] for other
    results (a schema change, void); raises OSError or ProbeError (the server's error message)."""
    with socket.create_connection((addr, port), timeout=timeout) as s:
        s.settimeout(timeout)
        f = s.makefile("rb")

        def request(opcode, body):
            s.sendall(struct.pack(">BBhBi", 4, 0, 0, opcode, len(body)) + body)
            _, _, _, op, n = struct.unpack(">BBhBi", _read_exact(f, 9))
            payload = _read_exact(f, n)
            if op == 0:  # ERROR: [int code][string message]
                raise ProbeError(_string(payload, 4)[0])
            return op, payload

        request(0x01, b"\x00\x01\x00\x0bCQL_VERSION\x00\x053.0.0")
        q = query.encode()
        op, b = request(0x07, struct.pack(">i", len(q)) + q + b"\x00\x01\x00")
        if op != 0x08:
            raise ProbeError(f"unexpected response opcode {op}")
        try:
            return _first_column(b)
        except (struct.error, IndexError):
            return []


def _first_column(b):
    """The first column of a RESULT body of kind Rows whose columns have simple types; [] otherwise."""
    kind, = struct.unpack(">i", b[:4])
    if kind != 2:
        return []
    flags, ncols = struct.unpack(">ii", b[4:12])
    p = 12
    if flags & 2:  # has_more_pages: the paging state
        (n,) = struct.unpack(">i", b[p:p + 4])
        p += 4 + max(n, 0)
    if flags & 1:
        _, p = _string(b, p)
        _, p = _string(b, p)
    for _ in range(ncols):
        if not flags & 1:
            _, p = _string(b, p)
            _, p = _string(b, p)
        _, p = _string(b, p)
        p += 2  # a simple type id (varchar)
    (rows,) = struct.unpack(">i", b[p:p + 4])
    p += 4
    out = []
    for _ in range(rows):
        cells = []
        for _ in range(ncols):
            (n,) = struct.unpack(">i", b[p:p + 4])
            cells.append(b[p + 4:p + 4 + max(n, 0)].decode(errors="replace") if n >= 0 else None)
            p += 4 + max(n, 0)
        out.append(cells[0])
    return out


def free_port(addr):
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


def port_open(addr, port):
    try:
        with socket.create_connection((addr, port), timeout=0.5):
            return True
    except OSError:
        return False


def machine():
    info = {"cores": os.cpu_count(), "kernel": platform.release(), "arch": platform.machine()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    info["memory_bytes"] = int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    info["os"] = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    info["loadavg_start"] = os.getloadavg()[0]
    return info


def dir_bytes(path):
    """Bytes of the regular files under `path`, leaving out snapshots and backups."""
    return sum(dir_components(path).values())


def component_of(name):
    """The SSTable component a file name is of: `ha-3-Data.db` and `oa-3gdm_0x2a-bti-Data.db` are
    Data, `nb-1-big-TOC.txt` is TOC, `Digest.crc32` files Digest; other files are "other"."""
    m = re.search(r"-([A-Za-z]+)\.(db|txt|crc32|adler32)$", name)
    return m.group(1) if m and not name.startswith("tmp") else "other"


def dir_components(path):
    """Bytes of the regular files under `path` by SSTable component (see `component_of`), leaving
    out snapshots and backups."""
    out = {}
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if d not in ("snapshots", "backups")]
        for name in files:
            try:
                size = os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue  # removed by a compaction while we walked
            key = component_of(name)
            out[key] = out.get(key, 0) + size
    return out
