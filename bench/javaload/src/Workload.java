// The standard1 schema and statements of cassandra-stress's write, read and mixed commands, prepared
// once; each operation binds a key (and for a write, five fresh values) to its prepared statement.
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

final class Workload {
  final List<String> names = new ArrayList<>();   // WRITE, READ: the operation types, in ratio order
  private final List<Integer> weights = new ArrayList<>();
  private final List<PreparedStatement> statements = new ArrayList<>();
  private final List<Boolean> reads = new ArrayList<>();
  private final int totalWeight;

  Workload(CqlSession session, Options o) {
    createSchema(session, o);
    for (Map.Entry<String, Integer> e : o.ratio.entrySet()) {
      boolean read = e.getKey().equals("read");
      names.add(e.getKey().toUpperCase());
      weights.add(e.getValue());
      reads.add(read);
      statements.add(session.prepare(read ? select(o.keyspace) : insert(o.keyspace)));
    }
    totalWeight = weights.stream().mapToInt(Integer::intValue).sum();
  }

  private static void createSchema(CqlSession session, Options o) {
    Duration timeout = Duration.ofSeconds(60);
    session.execute(SimpleStatement.newInstance(String.format(
        "CREATE KEYSPACE IF NOT EXISTS \"%s\" WITH replication = {'class': 'SimpleStrategy', "
            + "'replication_factor': '%d'} AND durable_writes = true", o.keyspace, o.replicationFactor))
        .setTimeout(timeout));
    StringBuilder cols = new StringBuilder();
    for (int i = 0; i < Keys.COLUMNS; i++) cols.append(", \"C").append(i).append("\" blob");
    session.execute(SimpleStatement.newInstance(String.format(
        "CREATE TABLE IF NOT EXISTS \"%s\".standard1 (key blob PRIMARY KEY%s) WITH compression = {}",
        o.keyspace, cols)).setTimeout(timeout));
  }

  private static String columns() {
    List<String> c = new ArrayList<>();
    for (int i = 0; i < Keys.COLUMNS; i++) c.add("\"C" + i + "\"");
    return String.join(",", c);
  }

  private static String insert(String keyspace) {
    return String.format("INSERT INTO \"%s\".\"standard1\" (key,%s) VALUES (?%s)", keyspace, columns(),
        ",?".repeat(Keys.COLUMNS));
  }

  private static String select(String keyspace) {
    return String.format("SELECT %s FROM \"%s\".\"standard1\" WHERE KEY=?", columns(), keyspace);
  }

  /** The operation type of the next request, by the ratio's weights. */
  int choose(Random random) {
    if (names.size() == 1) return 0;
    int x = random.nextInt(totalWeight);
    for (int i = 0; i < weights.size(); i++) {
      if (x < weights.get(i)) return i;
      x -= weights.get(i);
    }
    return weights.size() - 1;
  }

  boolean isRead(int op) {
    return reads.get(op);
  }

  BoundStatement bind(int op, Keys keys, long seed) {
    ByteBuffer key = keys.key(seed);
    PreparedStatement p = statements.get(op);
    if (reads.get(op)) return p.bind(key);
    Object[] values = new Object[Keys.COLUMNS + 1];
    values[0] = key;
    for (int i = 0; i < Keys.COLUMNS; i++) values[i + 1] = keys.value(key, i);
    return p.bind(values);
  }
}
