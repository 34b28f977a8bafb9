"""No input can crash the node: statements nested past the limits, overlong names and huge
literals get an error (the node keeps answering), and everything at the limits runs to its end
on the debug build's 2 MiB worker stacks.

Apache Cassandra 5.0.4 (refcass) answers the same deep statements at 1,000 and 3,000 levels with
a ServerError carrying java.lang.StackOverflowError (about 150 levels of terms, 500 of types);
Helenus answers a SyntaxError naming its limit of 100 levels instead.
"""
import pytest
from cassandra import InvalidRequest
from cassandra.protocol import ConfigurationException, SyntaxException

from conftest import connect

LIMIT = 100
NESTING_ERROR = f"terms, selectors, relations and types nest at most {LIMIT} levels"

SETUP = [
    "CREATE KEYSPACE IF NOT EXISTS h WITH replication = {'class':'SimpleStrategy','replication_factor':1}",
    "CREATE TABLE IF NOT EXISTS h.t (k int PRIMARY KEY, v int, l list<int>, m map<int, int>)",
    "INSERT INTO h.t (k, v) VALUES (1, 1)",
]

# One statement per shape a client can nest, `d` levels deep.
SHAPES = {
    "parentheses": lambda d: "SELECT * FROM h.t WHERE k = " + "(" * d + "1" + ")" * d,
    "list literal": lambda d: "SELECT * FROM h.t WHERE l = " + "[" * d + "1" + "]" * d + " ALLOW FILTERING",
    "map literal": lambda d: "UPDATE h.t SET m = " + "{1: " * d + "1" + "}" * d + " WHERE k = 1",
    "tuple literal": lambda d: "SELECT * FROM h.t WHERE k = " + "(1, " * d + "1" + ")" * d,
    "function calls": lambda d: "SELECT * FROM h.t WHERE k = " + "f(" * d + "1" + ")" * d,
    "selector function calls": lambda d: "SELECT " + "blobasint(" * d + "k" + ")" * d + " FROM h.t",
    "selector parentheses": lambda d: "SELECT " + "(" * d + "k" + ")" * d + " FROM h.t",
    "selector arithmetic": lambda d: "SELECT k" + " + 1" * d + " FROM h.t",
    "casts": lambda d: "SELECT * FROM h.t WHERE k = " + "CAST(" * d + "1" + " AS int)" * d,
    "type hints": lambda d: "SELECT * FROM h.t WHERE k = " + "(int)" * d + "1",
    "where parentheses": lambda d: "SELECT * FROM h.t WHERE " + "(" * d + "k = 1" + ")" * d,
    "column type": lambda d: f"CREATE TABLE IF NOT EXISTS h.ty{d} (k int PRIMARY KEY, v "
                             + "tuple<" * d + "int" + ">" * d + ")",
    "frozen lists type": lambda d: f"CREATE TABLE IF NOT EXISTS h.fl{d} (k int PRIMARY KEY, v "
                                   + "frozen<list<" * (d // 2) + "list<" * (d % 2) + "int" + ">" * d + ")",
}


@pytest.fixture(scope="module")
def hostile(node):
    cluster, session = connect(node, protocol_version=4)
    for statement in SETUP:
        session.execute(statement)
    yield session
    cluster.shutdown()


def assert_alive(node, session):
    assert node.proc.poll() is None, node.log()
    row = session.execute("SELECT release_version FROM system.local").one()
    assert row.release_version


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("depth", [LIMIT + 1, 1_000, 3_000])
def test_nesting_past_the_limit_is_a_syntax_error(node, hostile, shape, depth):
    with pytest.raises(SyntaxException) as error:
        hostile.execute(SHAPES[shape](depth))
    assert NESTING_ERROR in str(error.value)
    assert_alive(node, hostile)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_nesting_at_the_limit_runs_to_its_end(node, hostile, shape):
    """Parsed, analysed and executed (or refused by analysis) on a 2 MiB worker stack."""
    try:
        hostile.execute(SHAPES[shape](LIMIT))
    except InvalidRequest as e:
        assert "nest" not in str(e)
    assert_alive(node, hostile)


def test_values_nested_to_the_limit_round_trip(node, hostile):
    tuples = "tuple<" * LIMIT + "int" + ">" * LIMIT
    hostile.execute(f"CREATE TABLE IF NOT EXISTS h.deep (k int PRIMARY KEY, v {tuples})")
    literal = "(" * LIMIT + "7" + ")" * LIMIT
    hostile.execute(f"INSERT INTO h.deep (k, v) VALUES (1, {literal})")
    value = (7,)
    for _ in range(LIMIT - 1):
        value = (value,)
    insert = hostile.prepare("INSERT INTO h.deep (k, v) VALUES (?, ?)")
    hostile.execute(insert, (2, value))
    rows = {row.k: row.v for row in hostile.execute("SELECT k, v FROM h.deep")}
    assert rows == {1: value, 2: value}
    assert_alive(node, hostile)


def test_user_types_cannot_chain_past_the_limit(node, hostile):
    hostile.execute("CREATE TYPE IF NOT EXISTS h.u0 (a int)")
    for i in range(1, LIMIT):
        hostile.execute(f"CREATE TYPE IF NOT EXISTS h.u{i} (a frozen<u{i - 1}>)")
    with pytest.raises(InvalidRequest) as error:
        hostile.execute(f"CREATE TYPE h.u{LIMIT} (a frozen<u{LIMIT - 1}>)")
    assert "Type nested too deeply: 101 levels" in str(error.value)
    with pytest.raises(InvalidRequest):
        hostile.execute(f"CREATE TABLE h.ut (k int PRIMARY KEY, v list<frozen<u{LIMIT - 1}>>)")
    assert_alive(node, hostile)


def test_user_types_cannot_double_without_bound(node, hostile):
    hostile.execute("CREATE TYPE IF NOT EXISTS h.w0 (a int)")
    with pytest.raises(InvalidRequest) as error:
        for i in range(1, 40):
            previous = f"frozen<w{i - 1}>"
            hostile.execute(f"CREATE TYPE IF NOT EXISTS h.w{i} (a {previous}, b {previous})")
    assert "Type too large" in str(error.value)
    assert_alive(node, hostile)


def test_overlong_identifiers_are_refused(node, hostile):
    for name in ["c" * 65_536, "c" * 1_000_000, '"' + "é" * 40_000 + '"']:
        with pytest.raises(SyntaxException) as error:
            hostile.execute(f"CREATE TABLE h.longcol (k int PRIMARY KEY, {name} int)")
        assert "identifier too long" in str(error.value)
    longest = "c" * 65_535
    hostile.execute(f"CREATE TABLE IF NOT EXISTS h.longest (k int PRIMARY KEY, {longest} int)")
    hostile.execute(f"INSERT INTO h.longest (k, {longest}) VALUES (1, 2)")
    row = hostile.execute(f"SELECT {longest} FROM h.longest WHERE k = 1").one()
    assert list(row) == [2]
    assert_alive(node, hostile)


# Messages and codes as Apache Cassandra 5.0.4 answers them.
def test_table_and_keyspace_names_as_cassandra_checks_them(node, hostile):
    with pytest.raises(ConfigurationException) as error:
        hostile.execute('CREATE TABLE h."tä" (k int PRIMARY KEY)')
    assert ('message="h.tä: Table name must not be empty, more than 48 characters long, or contain '
            'non-alphanumeric-underscore characters (got "tä")"') in str(error.value)
    with pytest.raises(ConfigurationException) as error:
        hostile.execute('CREATE TABLE h.' + "t" * 223 + ' (k int PRIMARY KEY)')
    assert "Table name must not be more than 222 characters long (got 223 characters)" in str(error.value)
    hostile.execute('CREATE TABLE IF NOT EXISTS h.' + "t" * 222 + ' (k int PRIMARY KEY)')
    hostile.execute('CREATE TABLE IF NOT EXISTS h.' + "b" * 49 + ' (k int PRIMARY KEY)')
    with pytest.raises(InvalidRequest) as error:
        hostile.execute("CREATE KEYSPACE " + "k" * 49 + " WITH replication = "
                        "{'class':'SimpleStrategy','replication_factor':1}")
    assert "Keyspace name must not be empty, more than 48 characters long" in str(error.value)
    assert_alive(node, hostile)


def test_huge_literals_and_comments(node, hostile):
    with pytest.raises(InvalidRequest):
        hostile.execute("SELECT * FROM h.t WHERE k = '" + "é" * 100_000 + "'")
    with pytest.raises(InvalidRequest):
        hostile.execute("SELECT * FROM h.t WHERE k = '" + "''" * 100_000 + "'")
    rows = hostile.execute("SELECT k FROM h.t WHERE k = 1 " + "/* c */ -- d\n" * 20_000)
    assert [r.k for r in rows] == [1]
    assert_alive(node, hostile)


def test_cassandra_stress_counter_table_and_lenient_grammar(node, hostile):
    # cassandra-stress's `counter_write` creates its table with an empty column-list element.
    hostile.execute('CREATE TABLE IF NOT EXISTS h.counter1 (key blob PRIMARY KEY,\n, "C0" counter, "C1" counter)')
    hostile.execute('UPDATE h.counter1 SET "C0" = "C0" + 1 WHERE key = 0x01')
    assert hostile.execute('SELECT "C0" FROM h.counter1 WHERE key = 0x01').one()[0] == 1
    hostile.execute("CREATE TYPE IF NOT EXISTS h.lenient (a int,, b int,)")
    assert [r.k for r in hostile.execute("SELECT k FROM h.t WHERE k = 1;;;")] == [1]
    assert_alive(node, hostile)
