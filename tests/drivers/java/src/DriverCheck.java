// What the Java 4.x driver sees of a Helenus cluster, printed as one JSON object per line (read by
// tests/integration/test_drivers_java_go.py).
//
//   java -cp "$(cat target/classpath.txt)" src/DriverCheck.java [--watch KS] DC PREFIX HOST...
//
// DC is the local datacenter (explicit contact points need one), PREFIX names the keyspaces this
// run creates (PREFIX_rf2: SimpleStrategy 2, PREFIX_rf3: NetworkTopologyStrategy DC: 3). After the
// first line the program waits for a line on stdin naming a node the test has killed, then writes
// at ALL until the server answers Unavailable and prints a second line with what the driver saw;
// then, after another line (the node restarted), a third with how long the driver took to see it
// up again (reconnection retries are 30 s apart: the STATUS_CHANGE UP event brings it back).
// With --watch KS it only watches a node join (see watch()).
import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.NodeState;
import com.datastax.oss.driver.api.core.metadata.TokenMap;
import com.datastax.oss.driver.api.core.metadata.token.Token;
import com.datastax.oss.driver.api.core.servererrors.UnavailableException;
import com.datastax.oss.driver.api.core.type.codec.TypeCodecs;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

public class DriverCheck {
  static final String[] KEYS = {"a", "b", "c", "key-1", "key-2", "key-3", "key-42", "helenus", "zebra", "0"};
  static final int PARTITIONS = 50, ROWS_PER_PARTITION = 10, PAGE_SIZE = 37;

  public static void main(String[] args) throws Exception {
    String watch = null;
    if (args[0].equals("--watch")) {
      watch = args[1];
      args = java.util.Arrays.copyOfRange(args, 2, args.length);
    }
    String dc = args[0], prefix = args[1];
    List<InetSocketAddress> contacts = new ArrayList<>();
    for (int i = 2; i < args.length; i++) contacts.add(new InetSocketAddress(args[i], 9042));
    DriverConfigLoader config =
        DriverConfigLoader.programmaticBuilder()
            .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(10))
            .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, Duration.ofSeconds(10))
            .withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, Duration.ofSeconds(10))
            .withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, Duration.ofSeconds(10))
            // Schema refreshes after a change wait for this window (1 s by default).
            .withDuration(DefaultDriverOption.METADATA_SCHEMA_WINDOW, Duration.ofMillis(100))
            // A node that comes back is seen through the STATUS_CHANGE UP event, not by retrying.
            .withDuration(DefaultDriverOption.RECONNECTION_BASE_DELAY, Duration.ofSeconds(30))
            .withDuration(DefaultDriverOption.RECONNECTION_MAX_DELAY, Duration.ofSeconds(60))
            .withBoolean(DefaultDriverOption.TIMESTAMP_GENERATOR_FORCE_JAVA_CLOCK, true)
            .build();
    Map<String, Object> out = new LinkedHashMap<>();
    long started = System.nanoTime();
    try (CqlSession session =
        CqlSession.builder()
            .addContactPoints(contacts)
            .withLocalDatacenter(dc)
            .withConfigLoader(config)
            .build()) {
      if (watch != null) {
        watch(session, watch);
        return;
      }
      out.put("driver", "java-driver-core " + com.datastax.oss.driver.api.core.session.Session.OSS_DRIVER_COORDINATES.getVersion());
      out.put("protocol_version", session.getContext().getProtocolVersion().toString());
      out.put("connect_ms", ms(started));
      // The node the control connection (the one registered for events) talks to: the test kills
      // another one, since the driver retries a lost control connection only after the
      // reconnection delay (30 s here) and would hear no events meanwhile.
      var control =
          ((com.datastax.oss.driver.internal.core.context.InternalDriverContext) session.getContext())
              .getControlConnection()
              .channel();
      out.put("control_host", control == null ? null : control.getEndPoint().resolve().toString().replaceAll("^.*/|:\\d+$", ""));

      // Schema: two keyspaces and two tables, agreement as the driver reports it.
      String rf2 = prefix + "_rf2", rf3 = prefix + "_rf3";
      List<Object> agreement = new ArrayList<>();
      for (String ddl :
          new String[] {
            "CREATE KEYSPACE " + rf2 + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
            "CREATE KEYSPACE " + rf3 + " WITH replication = {'class': 'NetworkTopologyStrategy', '" + dc + "': 3}",
            "CREATE TABLE " + rf2 + ".kv (k text PRIMARY KEY, v int)",
            "CREATE TABLE " + rf3 + ".kv (k text PRIMARY KEY, v int)",
            "CREATE TABLE " + rf3 + ".rows (p int, c int, v text, PRIMARY KEY (p, c))",
            "CREATE TABLE " + rf2 + ".composite (a int, b text, c int, v int, PRIMARY KEY ((a, b), c))",
          }) {
        long t = System.nanoTime();
        ResultSet rs = session.execute(ddl);
        boolean inResult = rs.getExecutionInfo().isSchemaInAgreement();
        boolean check = session.checkSchemaAgreement();
        Map<String, Object> a = new LinkedHashMap<>();
        a.put("statement", ddl);
        a.put("execution_info_agreement", inResult);
        a.put("check_schema_agreement", check);
        a.put("ms", ms(t));
        agreement.add(a);
      }
      out.put("schema_agreement", agreement);

      // Hosts and the token map (the schema refresh above also refreshed the token map's
      // keyspaces).
      TokenMap tokens = session.getMetadata().getTokenMap().orElse(null);
      out.put("token_map", tokens != null);
      out.put("partitioner", tokens == null ? null : tokens.getPartitionerName());
      List<Object> hosts = hosts(session, tokens);
      out.put("hosts", hosts);
      Map<String, Object> replicas = new LinkedHashMap<>();
      for (String ks : new String[] {rf2, rf3}) replicas.put(ks, replicas(tokens, ks));
      out.put("replicas", replicas);

      // The schema metadata the driver parsed from system_schema.
      Map<String, Object> tables = new LinkedHashMap<>();
      for (String[] t : new String[][] {{rf2, "kv"}, {rf3, "kv"}, {rf3, "rows"}}) {
        var table = session.getMetadata().getKeyspace(t[0]).flatMap(k -> k.getTable(t[1])).orElse(null);
        Map<String, Object> m = new LinkedHashMap<>();
        if (table != null) {
          List<String> pk = new ArrayList<>(), ck = new ArrayList<>();
          table.getPartitionKey().forEach(c -> pk.add(c.getName().asInternal()));
          table.getClusteringColumns().keySet().forEach(c -> ck.add(c.getName().asInternal()));
          Map<String, Object> columns = new LinkedHashMap<>();
          table.getColumns().forEach((name, c) -> columns.put(name.asInternal(), c.getType().asCql(false, true)));
          m.put("partition_key", pk);
          m.put("clustering", ck);
          m.put("columns", columns);
        }
        tables.put(t[0] + "." + t[1], table == null ? null : m);
      }
      out.put("tables", tables);

      // Prepared INSERT/SELECT at QUORUM through the default (token-aware) policy.
      Map<String, Object> prepared = new LinkedHashMap<>();
      for (String ks : new String[] {rf2, rf3}) {
        PreparedStatement insert = session.prepare("INSERT INTO " + ks + ".kv (k, v) VALUES (?, ?)");
        PreparedStatement select = session.prepare("SELECT k, v FROM " + ks + ".kv WHERE k = ?");
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("insert_pk_indices", insert.getPartitionKeyIndices());
        p.put("select_pk_indices", select.getPartitionKeyIndices());
        int roundTrips = 0, onReplica = 0;
        List<Object> mismatches = new ArrayList<>();
        for (int i = 0; i < KEYS.length; i++) {
          String key = KEYS[i];
          BoundStatement ins = insert.bind(key, i).setConsistencyLevel(ConsistencyLevel.QUORUM);
          ResultSet w = session.execute(ins);
          ResultSet r = session.execute(select.bind(key).setConsistencyLevel(ConsistencyLevel.QUORUM));
          Row row = r.one();
          if (row != null && key.equals(row.getString("k")) && row.getInt("v") == i) roundTrips++;
          else mismatches.add(key);
          // The routing key the driver computed from the prepared metadata, and who served it.
          ByteBuffer routingKey = ins.getRoutingKey();
          if (tokens != null && routingKey != null) {
            var owners = tokens.getReplicas(ks, routingKey);
            if (owners.contains(w.getExecutionInfo().getCoordinator())
                && owners.contains(r.getExecutionInfo().getCoordinator())) onReplica++;
          }
        }
        p.put("round_trips", roundTrips);
        p.put("mismatches", mismatches);
        p.put("coordinator_is_replica", onReplica);
        prepared.put(ks, p);
      }
      out.put("prepared", prepared);

      // A composite partition key bound out of order: the indexes say where its parts are, the
      // driver builds the composite routing key from them.
      PreparedStatement cins = session.prepare("INSERT INTO " + rf2 + ".composite (c, b, a, v) VALUES (?, ?, ?, ?)");
      PreparedStatement csel = session.prepare("SELECT v FROM " + rf2 + ".composite WHERE b = ? AND a = ? AND c = ?");
      Map<String, Object> composite = new LinkedHashMap<>();
      composite.put("insert_pk_indices", cins.getPartitionKeyIndices());
      composite.put("select_pk_indices", csel.getPartitionKeyIndices());
      Map<String, Object> compositeReplicas = new LinkedHashMap<>();
      int cRoundTrips = 0, cOnReplica = 0;
      for (int i = 0; i < 5; i++) {
        String b = "x" + i;
        BoundStatement ins = cins.bind(i, b, i, i).setConsistencyLevel(ConsistencyLevel.QUORUM);
        ResultSet w = session.execute(ins);
        ResultSet r = session.execute(csel.bind(b, i, i).setConsistencyLevel(ConsistencyLevel.QUORUM));
        Row row = r.one();
        if (row != null && row.getInt("v") == i) cRoundTrips++;
        TreeSet<String> owners = new TreeSet<>();
        var nodes = tokens == null || ins.getRoutingKey() == null ? java.util.Set.<Node>of() : tokens.getReplicas(rf2, ins.getRoutingKey());
        nodes.forEach(n -> owners.add(address(n)));
        compositeReplicas.put(i + ":" + b, new ArrayList<>(owners));
        if (nodes.contains(w.getExecutionInfo().getCoordinator()) && nodes.contains(r.getExecutionInfo().getCoordinator()))
          cOnReplica++;
      }
      composite.put("replicas", compositeReplicas);
      composite.put("round_trips", cRoundTrips);
      composite.put("coordinator_is_replica", cOnReplica);
      out.put("composite", composite);

      // Paging: 500 rows, a scan in pages of 37, every row exactly once.
      PreparedStatement put = session.prepare("INSERT INTO " + rf3 + ".rows (p, c, v) VALUES (?, ?, ?)");
      for (int p = 0; p < PARTITIONS; p++)
        for (int c = 0; c < ROWS_PER_PARTITION; c++)
          session.execute(put.bind(p, c, "v" + p + "." + c).setConsistencyLevel(ConsistencyLevel.QUORUM));
      Map<String, Object> paging = new LinkedHashMap<>();
      List<Integer> pageSizes = new ArrayList<>();
      Map<String, Integer> seen = new LinkedHashMap<>();
      // The asynchronous result set shows the pages as the server cut them.
      AsyncResultSet page =
          session
              .executeAsync(
                  SimpleStatement.newInstance("SELECT p, c, v FROM " + rf3 + ".rows")
                      .setPageSize(PAGE_SIZE)
                      .setConsistencyLevel(ConsistencyLevel.QUORUM))
              .toCompletableFuture()
              .get();
      while (true) {
        int n = 0;
        for (Row row : page.currentPage()) {
          seen.merge(row.getInt("p") + "." + row.getInt("c"), 1, Integer::sum);
          n++;
        }
        pageSizes.add(n);
        if (!page.hasMorePages()) break;
        page = page.fetchNextPage().toCompletableFuture().get();
      }
      paging.put("page_size", PAGE_SIZE);
      paging.put("pages", pageSizes);
      paging.put("rows", pageSizes.stream().mapToInt(Integer::intValue).sum());
      paging.put("distinct", seen.size());
      paging.put("duplicates", seen.values().stream().filter(v -> v > 1).count());
      out.put("paging", paging);

      // An error the server sends: a table that does not exist.
      try {
        session.execute("SELECT * FROM " + rf3 + ".missing");
        out.put("invalid_query", null);
      } catch (DriverException e) {
        out.put("invalid_query", e.getClass().getSimpleName() + ": " + e.getMessage());
      }
      out.put("total_ms", ms(started));
      System.out.println(json(out));
      System.out.flush();

      // Second part: the test kills a node, then says so on stdin.
      BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in));
      String line = stdin.readLine();
      if (line == null) return;
      String down = line.trim();
      Map<String, Object> after = new LinkedHashMap<>();
      long t = System.nanoTime();
      String state = null;
      while (ms(t) < 20000) {
        for (Node node : session.getMetadata().getNodes().values())
          if (address(node).equals(down)) state = node.getState().toString();
        if (NodeState.DOWN.toString().equals(state)) break;
        Thread.sleep(100);
      }
      after.put("down_node_state", state);
      after.put("down_seen_ms", ms(t));
      PreparedStatement insert = session.prepare("INSERT INTO " + rf3 + ".kv (k, v) VALUES (?, ?)");
      Object unavailable = null;
      List<String> others = new ArrayList<>();
      t = System.nanoTime();
      while (ms(t) < 20000) {
        try {
          session.execute(insert.bind("all", 1).setConsistencyLevel(ConsistencyLevel.ALL));
          others.add("applied");
        } catch (UnavailableException e) {
          Map<String, Object> u = new LinkedHashMap<>();
          u.put("consistency", e.getConsistencyLevel().toString());
          u.put("required", e.getRequired());
          u.put("alive", e.getAlive());
          unavailable = u;
          break;
        } catch (DriverException e) {
          others.add(e.getClass().getSimpleName());
        }
        Thread.sleep(200);
      }
      after.put("unavailable", unavailable);
      after.put("before_unavailable", others);
      ResultSet q = session.execute(
          SimpleStatement.newInstance("SELECT v FROM " + rf3 + ".kv WHERE k = 'a'")
              .setConsistencyLevel(ConsistencyLevel.QUORUM));
      after.put("quorum_read_with_node_down", q.one() != null);
      System.out.println(json(after));
      System.out.flush();

      // Third part: the test restarts the node, then says so.
      if (stdin.readLine() == null) return;
      Map<String, Object> back = new LinkedHashMap<>();
      t = System.nanoTime();
      while (ms(t) < 30000) {
        for (Node node : session.getMetadata().getNodes().values())
          if (address(node).equals(down)) state = node.getState().toString();
        if (NodeState.UP.toString().equals(state)) break;
        Thread.sleep(50);
      }
      back.put("state", state);
      back.put("up_seen_ms", ms(t));
      System.out.println(json(back));
      System.out.flush();
    }
  }

  /** Every node the driver knows: address, datacenter, rack, host id, state, tokens. */
  static List<Object> hosts(CqlSession session, TokenMap tokens) {
    List<Object> hosts = new ArrayList<>();
    for (Node node : session.getMetadata().getNodes().values()) {
      Map<String, Object> h = new LinkedHashMap<>();
      h.put("address", address(node));
      h.put("datacenter", node.getDatacenter());
      h.put("rack", node.getRack());
      h.put("host_id", String.valueOf(node.getHostId()));
      h.put("state", node.getState().toString());
      h.put("version", String.valueOf(node.getCassandraVersion()));
      List<String> ts = new ArrayList<>();
      if (tokens != null) for (Token token : tokens.getTokens(node)) ts.add(tokens.format(token));
      h.put("tokens", ts);
      hosts.add(h);
    }
    return hosts;
  }

  /** The replicas the driver's token map gives each key of `ks` (sorted addresses). */
  static Map<String, Object> replicas(TokenMap tokens, String ks) {
    Map<String, Object> perKey = new LinkedHashMap<>();
    for (String key : KEYS) {
      TreeSet<String> rs = new TreeSet<>();
      if (tokens != null)
        for (Node n : tokens.getReplicas(ks, TypeCodecs.TEXT.encode(key, ProtocolVersion.DEFAULT)))
          rs.add(address(n));
      perKey.put(key, new ArrayList<>(rs));
    }
    return perKey;
  }

  /**
   * --watch KS: prints the hosts, then waits for a line with a host count N (the test adds a
   * node meanwhile: TOPOLOGY_CHANGE NEW_NODE), waits until the driver knows N hosts, all up and in
   * its token map, and prints them with the replicas of KS's keys.
   */
  static void watch(CqlSession session, String ks) throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("hosts", hosts(session, session.getMetadata().getTokenMap().orElse(null)));
    System.out.println(json(out));
    System.out.flush();
    String line = new BufferedReader(new InputStreamReader(System.in)).readLine();
    if (line == null) return;
    int expected = Integer.parseInt(line.trim());
    long t = System.nanoTime();
    while (ms(t) < 30000) {
      TokenMap tokens = session.getMetadata().getTokenMap().orElse(null);
      var nodes = session.getMetadata().getNodes().values();
      if (tokens != null
          && nodes.size() == expected
          && nodes.stream().allMatch(n -> n.getState() == NodeState.UP && !tokens.getTokens(n).isEmpty()))
        break;
      Thread.sleep(50);
    }
    out = new LinkedHashMap<>();
    out.put("seen_ms", ms(t));
    TokenMap tokens = session.getMetadata().getTokenMap().orElse(null);
    out.put("hosts", hosts(session, tokens));
    out.put("replicas", replicas(tokens, ks));
    System.out.println(json(out));
    System.out.flush();
  }

  static String address(Node node) {
    return node.getBroadcastRpcAddress()
        .map(a -> a.getAddress().getHostAddress())
        .orElse(node.getEndPoint().resolve().toString().replaceAll("^.*/|:\\d+$", ""));
  }

  static long ms(long since) {
    return (System.nanoTime() - since) / 1_000_000;
  }

  static String json(Object o) {
    if (o == null) return "null";
    if (o instanceof Map<?, ?> m) {
      StringBuilder b = new StringBuilder("{");
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (b.length() > 1) b.append(", ");
        b.append(json(String.valueOf(e.getKey()))).append(": ").append(json(e.getValue()));
      }
      return b.append("}").toString();
    }
    if (o instanceof Iterable<?> l) {
      StringBuilder b = new StringBuilder("[");
      for (Object x : l) {
        if (b.length() > 1) b.append(", ");
        b.append(json(x));
      }
      return b.append("]").toString();
    }
    if (o instanceof Number || o instanceof Boolean) return o.toString();
    StringBuilder b = new StringBuilder("\"");
    for (char c : o.toString().toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }
}
