"""Errors carry Cassandra's codes and messages. Expected texts were taken from Apache Cassandra
5.0.4 (refcass) running the same statements."""
import socket
import struct

import pytest
from cassandra import AlreadyExists, InvalidRequest
from cassandra.protocol import SyntaxException

SETUP = [
    "CREATE KEYSPACE IF NOT EXISTS e WITH replication = {'class':'SimpleStrategy','replication_factor':1}",
    "CREATE TABLE IF NOT EXISTS e.t (p int, c int, v int, s int static, PRIMARY KEY (p, c))",
    "CREATE TABLE IF NOT EXISTS e.cn (k int PRIMARY KEY, n counter)",
    "CREATE TABLE IF NOT EXISTS e.t2 (a int, b int, c int, d int, v int, PRIMARY KEY ((a, b), c, d))",
]

FILTERING = ("Cannot execute this query as it might involve data filtering and thus may have unpredictable "
             "performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING")

# (statement, exception class, message) — matches Cassandra 5.0.4.
CASES = [
    ("SELECT * FROM nope.t", InvalidRequest, "keyspace nope does not exist"),
    ("SELECT * FROM e.nope", InvalidRequest, "table nope does not exist"),
    ("SELECT x FROM e.t", InvalidRequest, "Undefined column name x in table e.t"),
    ("SELECT * FROM e.t WHERE v = 1", InvalidRequest, FILTERING),
    ("SELECT * FROM e.t WHERE c = 1", InvalidRequest, FILTERING),
    ("SELECT * FROM e.t WHERE p = 1 AND v = 2", InvalidRequest, FILTERING),
    ("INSERT INTO e.t (p, v) VALUES (1, 1)", InvalidRequest, "Some clustering keys are missing: c"),
    ("INSERT INTO e.t (c, v) VALUES (1, 1)", InvalidRequest, "Some partition key parts are missing: p"),
    ("INSERT INTO e.t (p, c, x) VALUES (1, 1, 1)", InvalidRequest, "Undefined column name x in table e.t"),
    ("INSERT INTO e.t (p, c, v) VALUES (1, 1, 'a')", InvalidRequest, 'Invalid STRING constant (a) for "v" of type int'),
    ("INSERT INTO e.t (p, c, v) VALUES (1, 1)", InvalidRequest, "Unmatched column names/values"),
    ("UPDATE e.t SET p = 1 WHERE p = 1 AND c = 1", InvalidRequest, "PRIMARY KEY part p found in SET part"),
    ("UPDATE e.t SET v = 1 WHERE p = 1", InvalidRequest, "Some clustering keys are missing: c"),
    ("UPDATE e.cn SET n = 1 WHERE k = 1", InvalidRequest,
     "Cannot set the value of counter column n (counters can only be incremented/decremented, not set)"),
    ("INSERT INTO e.cn (k, n) VALUES (1, 1)", InvalidRequest,
     "INSERT statements are not allowed on counter tables, use UPDATE instead"),
    ("CREATE KEYSPACE e WITH replication = {'class':'SimpleStrategy','replication_factor':1}", AlreadyExists, None),
    ("CREATE TABLE e.t (k int PRIMARY KEY)", AlreadyExists, None),
    ("CREATE TABLE e.z (k int)", InvalidRequest, "No PRIMARY KEY specifed for table 'e.z' (exactly one required)"),
    ("DROP TABLE e.nope", InvalidRequest, "Table 'e.nope' doesn't exist"),
    ("DROP KEYSPACE nope", InvalidRequest, "Keyspace 'nope' doesn't exist"),
    ("USE nope", InvalidRequest, "Keyspace 'nope' does not exist"),
    ("SELECT * FORM e.t", SyntaxException, None),
    ("SELECT * FROM e.t WHERE p = 1 ORDER BY v", InvalidRequest,
     "Order by is currently only supported on the clustered columns of the PRIMARY KEY, got v"),
    ("SELECT * FROM e.t WHERE p = 1 AND c > 1 AND c > 2", InvalidRequest,
     "More than one restriction was found for the start bound on c"),
    ("SELECT * FROM e.t LIMIT 0", InvalidRequest, "LIMIT must be strictly positive"),
    ("SELECT * FROM e.t WHERE p = null", InvalidRequest, "Invalid null value in condition for column p"),
    ("DELETE FROM e.t WHERE c = 1", InvalidRequest, "Some partition key parts are missing: p"),
    ("DELETE v FROM e.t WHERE p = 1 AND c > 1", InvalidRequest, "Range deletions are not supported for specific columns"),
    ("SELECT * FROM t", InvalidRequest,
     "No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename"),
    ("CREATE TABLE e.z (k int PRIMARY KEY, k int)", InvalidRequest, "Duplicate column 'k' declaration for table 'e.z'"),
    ("INSERT INTO e.t (p, c, v) VALUES (1, 1, 1) USING TTL -1", InvalidRequest,
     "A TTL must be greater or equal to 0, but was -1"),
    ("SELECT DISTINCT c FROM e.t", InvalidRequest,
     "SELECT DISTINCT queries must only request partition key columns and/or static columns (not c)"),
    ("SELECT * FROM e.t2 WHERE a = 1 AND b = 1 AND d = 1", InvalidRequest,
     'PRIMARY KEY column "d" cannot be restricted as preceding column "c" is not restricted'),
    ("SELECT * FROM e.t2 WHERE a = 1 AND b = 1 AND c > 1 AND d = 1", InvalidRequest,
     'Clustering column "d" cannot be restricted (preceding column "c" is restricted by a non-EQ relation)'),
    ("SELECT * FROM e.t2 WHERE a = 1 AND b = 1 ORDER BY d", InvalidRequest,
     "Order by currently only supports the ordering of columns following their declared order in the PRIMARY KEY"),
    ("SELECT * FROM e.t2 WHERE a = 1 AND b = 1 ORDER BY c DESC, d ASC", InvalidRequest, "Unsupported order by relation"),
    ("SELECT * FROM e.t2 WHERE token(a) > 0", InvalidRequest,
     "The token() function must be applied to all partition key components or none of them"),
    ("SELECT * FROM e.t2 WHERE a = 1 AND b = 1 AND c = 1 AND c = 2", InvalidRequest,
     "c cannot be restricted by more than one relation if it includes an Equal"),
    ("SELECT WRITETIME(a) FROM e.t2", InvalidRequest, "Cannot use selection function writetime on PRIMARY KEY part a"),
    ("UPDATE e.t2 SET v = 1 WHERE a = 1 AND b = 1 AND c = 1 AND d > 1", InvalidRequest,
     "Slice restrictions are not supported on the clustering columns in UPDATE statements"),
    ("TRUNCATE e.nope", InvalidRequest, "table nope does not exist"),
    ("ALTER TABLE e.t2 ADD v int", InvalidRequest, "Column with name 'v' already exists"),
    ("ALTER TABLE e.t2 DROP a", InvalidRequest, "Cannot drop PRIMARY KEY column a"),
    ("ALTER TABLE e.t2 DROP zz", InvalidRequest, "Column zz was not found in table 'e.t2'"),
    ("ALTER TABLE e.t2 RENAME v TO vv", InvalidRequest, "Cannot rename non PRIMARY KEY column v"),
    ("CREATE TABLE e.bad (k int, v int, PRIMARY KEY (k, v)) WITH CLUSTERING ORDER BY (k DESC)", InvalidRequest,
     "Only clustering key columns can be defined in CLUSTERING ORDER directive: [k] are not clustering columns"),
    ("CREATE TABLE e.bad (k int PRIMARY KEY, v int static)", InvalidRequest,
     "Static columns are only useful (and thus allowed) if the table has at least one clustering column"),
]


@pytest.fixture(scope="module")
def prepared_session(session):
    for q in SETUP:
        session.execute(q)
    return session


@pytest.mark.parametrize("query,exc,message", CASES, ids=[c[0][:60] for c in CASES])
def test_error_matches_cassandra(prepared_session, query, exc, message):
    with pytest.raises(exc) as info:
        prepared_session.execute(query)
    if message is not None:
        assert message in str(info.value)


def test_syntax_error_has_position(prepared_session):
    with pytest.raises(SyntaxException) as info:
        prepared_session.execute("SELECT * FORM e.t")
    assert "line 1:9" in str(info.value)


def frame(version, stream, opcode, body=b"", flags=0):
    return struct.pack(">BBhBi", version, flags, stream, opcode, len(body)) + body


def read_frame(sock):
    header = b""
    while len(header) < 9:
        chunk = sock.recv(9 - len(header))
        if not chunk:
            return None
        header += chunk
    version, flags, stream, opcode, length = struct.unpack(">BBhBi", header)
    body = b""
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        if not chunk:
            break
        body += chunk
    return version, stream, opcode, body


def string_map(d):
    out = struct.pack(">H", len(d))
    for k, v in d.items():
        out += struct.pack(">H", len(k)) + k.encode() + struct.pack(">H", len(v)) + v.encode()
    return out


def test_garbage_and_truncated_frames_do_not_hurt_the_node(node, prepared_session):
    for junk in [b"\x00" * 3, b"GET / HTTP/1.1\r\n\r\n", bytes(range(256)) * 4, frame(4, 1, 0x07, b"\x00\x00")[:-1]]:
        with socket.create_connection((node.addr, node.port), timeout=5) as s:
            s.sendall(junk)
            s.shutdown(socket.SHUT_WR)
            try:
                while s.recv(4096):
                    pass
            except OSError:
                pass
    assert prepared_session.execute("SELECT * FROM e.t WHERE p = 1").all() == []


def test_malformed_body_gets_protocol_error_and_connection_survives(node):
    with socket.create_connection((node.addr, node.port), timeout=5) as s:
        s.sendall(frame(4, 1, 0x01, string_map({"CQL_VERSION": "3.0.0"})))
        assert read_frame(s)[2] == 0x02  # READY
        s.sendall(frame(4, 2, 0x07, b"\x00\x00\x10\x00abc"))  # QUERY with a long string that is cut short
        version, stream, opcode, body = read_frame(s)
        assert (stream, opcode) == (2, 0x00)
        assert struct.unpack(">i", body[:4])[0] == 0x000A
        query = b"SELECT key FROM system.local"
        s.sendall(frame(4, 3, 0x07, struct.pack(">i", len(query)) + query + b"\x00\x01\x00"))
        version, stream, opcode, body = read_frame(s)
        assert (stream, opcode) == (3, 0x08)  # RESULT


def test_unsupported_version_gets_protocol_error(node):
    with socket.create_connection((node.addr, node.port), timeout=5) as s:
        s.sendall(frame(0x42, 0, 0x05))
        got = read_frame(s)
        assert got is not None and got[2] == 0x00
        assert struct.unpack(">i", got[3][:4])[0] == 0x000A
