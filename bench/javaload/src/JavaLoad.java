// bench/javaload: cassandra-stress's standard1 write, read and mixed workloads on the Java driver
// (java-driver-core 4.x) as a user's application runs them: prepared statements, token-aware routing
// (the driver's default policy, routing keys from the prepared statements), asynchronous requests
// with a bounded number in flight per thread. Prints cassandra-stress's interval table and Results
// block (see Options for the command line, Stats for the output).
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import java.io.PrintStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

public final class JavaLoad {
  /** One run of the workload: until `count` operations were issued, or until `deadline`. */
  private static final class Phase {
    final CqlSession session;
    final Workload workload;
    final Options o;
    final List<Integer> ops;       // the operation types this phase draws from (indices into workload)
    final long count, deadline;    // count < 0: until the deadline
    final Population population;
    final Stats stats;
    final Pacer pacer;
    final AtomicLong issued = new AtomicLong();

    Phase(CqlSession session, Workload workload, Options o, List<Integer> ops, long count, Stats stats, boolean paced) {
      this.session = session;
      this.workload = workload;
      this.o = o;
      this.ops = ops;
      this.count = count;
      long now = System.nanoTime();
      this.deadline = count < 0 ? now + o.durationNanos : Long.MAX_VALUE;
      this.population = new Population(o);
      this.stats = stats;
      this.pacer = paced && o.fixedRate > 0 ? new Pacer(o.fixedRate, now) : null;
    }

    boolean claim() {
      if (count >= 0) return issued.getAndIncrement() < count;
      return System.nanoTime() < deadline;
    }

    void work() {
      Random random = new Random(ThreadLocalRandom.current().nextLong());
      Keys keys = new Keys();
      Semaphore inFlight = new Semaphore(o.inflight);
      while (claim()) {
        inFlight.acquireUninterruptibly();
        long due = pacer == null ? 0 : pacer.next();
        if (pacer != null && due >= deadline) {
          inFlight.release();
          break;
        }
        int op = ops.size() == 1 ? ops.get(0) : ops.get(workload.choose(random));
        var statement = workload.bind(op, keys, population.seed(random));
        long sent = System.nanoTime();
        long from = pacer == null ? sent : due;
        int slot = ops.indexOf(op);
        session.executeAsync(statement).whenComplete((rs, error) -> {
          stats.record(slot, from, sent, rs, error, workload.isRead(op));
          inFlight.release();
        });
      }
      inFlight.acquireUninterruptibly(o.inflight);
    }

    /** Runs the threads; with `report`, prints an interval row every second until they end. */
    void run(boolean report) throws InterruptedException {
      List<Thread> threads = new ArrayList<>();
      for (int i = 0; i < o.threads; i++) {
        Thread t = new Thread(this::work, "load-" + i);
        t.start();
        threads.add(t);
      }
      if (report) stats.header();
      for (Thread t : threads) {
        while (t.isAlive()) {
          t.join(1000);
          if (report && t.isAlive()) stats.interval();
        }
      }
      stats.interval();
    }
  }

  public static void main(String[] args) throws Exception {
    Options o;
    try {
      o = Options.parse(args);
    } catch (Options.Invalid e) {
      System.err.println("javaload: " + e.getMessage());
      System.exit(1);
      return;
    }
    try (CqlSession session = connect(o)) {
      Workload workload = new Workload(session, o);
      if (o.warmup) warmup(session, workload, o);
      List<Integer> all = new ArrayList<>();
      for (int i = 0; i < workload.names.size(); i++) all.add(i);
      System.out.println("Running " + o.command.toUpperCase() + " with " + o.threads + " threads "
          + (o.count >= 0 ? "for " + o.count + " iteration" : o.durationNanos / 1_000_000_000L + " seconds"));
      Stats stats = new Stats(workload.names, System.out);
      Phase phase = new Phase(session, workload, o, all, o.durationNanos >= 0 ? -1 : o.count, stats, true);
      phase.run(true);
      stats.results(phase.pacer);
    } catch (DriverException e) {
      System.err.println("javaload: " + e);
      System.exit(1);
    }
    System.exit(0); // the driver's non-daemon threads would keep the JVM up a while
  }

  /** cassandra-stress's warm-up: min(n/4, 50000) operations of each type, at full speed, not reported. */
  private static void warmup(CqlSession session, Workload workload, Options o) throws InterruptedException {
    long n = o.count > 0 && o.durationNanos < 0 ? Math.min(o.count / 4, 50_000) : 50_000;
    if (n == 0) return;
    PrintStream quiet = new PrintStream(OutputStream.nullOutputStream());
    for (int i = 0; i < workload.names.size(); i++) {
      System.out.println("Warming up " + workload.names.get(i) + " with " + n + " iterations...");
      Stats stats = new Stats(List.of(workload.names.get(i)), quiet);
      new Phase(session, workload, o, List.of(i), n, stats, false).run(false);
    }
  }

  private static CqlSession connect(Options o) {
    DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
        .withString(DefaultDriverOption.REQUEST_CONSISTENCY, o.consistency)
        .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(12))
        .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, Duration.ofSeconds(10))
        .withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, Duration.ofSeconds(30))
        .withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, Duration.ofSeconds(30))
        .build();
    List<InetSocketAddress> contacts = new ArrayList<>();
    for (String n : o.nodes) contacts.add(new InetSocketAddress(n, o.port));
    return CqlSession.builder().addContactPoints(contacts).withLocalDatacenter(o.datacenter)
        .withConfigLoader(config).build();
  }
}
