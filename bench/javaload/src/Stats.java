// Latencies and counts per operation type, printed as cassandra-stress prints them (the per-interval
// table and the `Results:` block bench/benchkit/parse.py reads), so that bench/run reads this
// program's output as it reads `helenus stress`'s.
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

final class Stats {
  private static final long MAX_NANOS = 120_000_000_000L;

  /** One operation type's figures over an interval or the whole run. */
  static final class Span {
    final Histogram latency = new Histogram(MAX_NANOS, 3);
    long ops, errors, partitions, rows;
    double seconds;
    double serviceNanos;

    void add(Span o) {
      latency.add(o.latency);
      ops += o.ops;
      errors += o.errors;
      partitions += o.partitions;
      rows += o.rows;
      serviceNanos += o.serviceNanos;
    }

    double rate(long n) {
      return seconds > 0 ? n / seconds : Double.NaN;
    }

    double ms(double percentile) {
      return ops == 0 ? Double.NaN : latency.getValueAtPercentile(percentile) / 1e6;
    }

    double meanMs() {
      return ops == 0 ? Double.NaN : latency.getMean() / 1e6;
    }

    double maxMs() {
      return ops == 0 ? Double.NaN : latency.getMaxValue() / 1e6;
    }
  }

  /** The recording side of one operation type, written by the driver's callbacks. */
  private static final class Live {
    final String name;
    final Recorder latency = new Recorder(MAX_NANOS, 3);
    final LongAdder ops = new LongAdder(), errors = new LongAdder(), partitions = new LongAdder(),
        rows = new LongAdder(), serviceNanos = new LongAdder();
    final Span total = new Span();

    Live(String name) {
      this.name = name;
    }

    Span drain(double seconds) {
      Span s = new Span();
      latency.getIntervalHistogramInto(s.latency);
      s.ops = ops.sumThenReset();
      s.errors = errors.sumThenReset();
      s.partitions = partitions.sumThenReset();
      s.rows = rows.sumThenReset();
      s.serviceNanos = serviceNanos.sumThenReset();
      s.seconds = seconds;
      total.add(s);
      return s;
    }
  }

  private final List<Live> live = new ArrayList<>();
  private final PrintStream out;
  private final List<Double> intervalRates = new ArrayList<>();
  private final long started = System.nanoTime();
  private long lastInterval = started;
  private long totalOps;

  Stats(List<String> opNames, PrintStream out) {
    for (String n : opNames) live.add(new Live(n));
    this.out = out;
  }

  /** A finished request of operation `op`: latency from `from`, service time from `sent`. */
  void record(int op, long from, long sent, AsyncResultSet rs, Throwable error, boolean isRead) {
    long now = System.nanoTime();
    Live l = live.get(op);
    if (error != null) {
      l.errors.increment();
      return;
    }
    l.latency.recordValue(Math.min(now - from, MAX_NANOS));
    l.serviceNanos.add(now - sent);
    l.ops.increment();
    l.partitions.increment();
    l.rows.add(isRead ? rs.remaining() : 1);
  }

  void header() {
    String[] names = {"op/s", "pk/s", "row/s", "mean", "med", ".95", ".99", ".999", "max", "time", "stderr",
        "errors", "gc: #", "max ms", "sum ms", "sdv ms", "mb"};
    int[] widths = {8, 8, 8, 8, 8, 8, 8, 8, 8, 7, 9, 7, 7, 8, 8, 8, 8};
    StringBuilder s = new StringBuilder(String.format("%-50s%10s", "type", "total ops"));
    for (int i = 0; i < names.length; i++) s.append(String.format(",%" + widths[i] + "s", names[i]));
    out.println(s);
  }

  /** Ends an interval: one row per operation type (when there are several) and the total row. */
  void interval() {
    long now = System.nanoTime();
    double seconds = (now - lastInterval) / 1e9;
    lastInterval = now;
    Span all = new Span();
    all.seconds = seconds;
    for (Live l : live) {
      Span s = l.drain(seconds);
      all.add(s);
      if (live.size() > 1) row(l.name, s, l.total.ops, now);
    }
    totalOps += all.ops;
    if (seconds >= 0.5) intervalRates.add(all.rate(all.ops));
    row("total", all, totalOps, now);
  }

  private void row(String kind, Span s, long total, long now) {
    out.println(String.format("%-50s%10d,%8s,%8s,%8s,%8s,%8s,%8s,%8s,%8s,%8s,%7s,%9s,%7d,%7d,%8d,%8d,%8d,%8d",
        kind + ",", total, f(s.rate(s.ops), 0), f(s.rate(s.partitions), 0), f(s.rate(s.rows), 0),
        f(s.meanMs(), 1), f(s.ms(50), 1), f(s.ms(95), 1), f(s.ms(99), 1), f(s.ms(99.9), 1), f(s.maxMs(), 1),
        f((now - started) / 1e9, 1), f(stderr(), 5), s.errors, 0, 0, 0, 0, 0));
  }

  /** The standard error of the mean interval op rate, relative to that mean (cassandra-stress's stderr). */
  private double stderr() {
    int n = intervalRates.size();
    if (n < 2) return 0;
    double mean = intervalRates.stream().mapToDouble(d -> d).average().orElse(0);
    double var = intervalRates.stream().mapToDouble(d -> (d - mean) * (d - mean)).sum() / (n - 1);
    return mean > 0 ? Math.sqrt(var / n) / mean : 0;
  }

  /** The `Results:` block over the whole run. */
  void results(Pacer pacer) {
    double seconds = (lastInterval - started) / 1e9;
    Span all = new Span();
    all.seconds = seconds;
    List<String[]> per = new ArrayList<>();
    for (Live l : live) {
      l.total.seconds = seconds;
      all.add(l.total);
    }
    out.println();
    out.println();
    out.println("Results:");
    out.println(line("Op rate                   : %8s op/s  ", g(all.rate(all.ops), 0), s -> g(s.rate(s.ops), 0) + " op/s"));
    out.println(line("Partition rate            : %8s pk/s  ", g(all.rate(all.partitions), 0),
        s -> g(s.rate(s.partitions), 0) + " pk/s"));
    out.println(line("Row rate                  : %8s row/s ", g(all.rate(all.rows), 0), s -> g(s.rate(s.rows), 0) + " row/s"));
    latency("Latency mean              ", all.meanMs(), Span::meanMs);
    latency("Latency median            ", all.ms(50), s -> s.ms(50));
    latency("Latency 95th percentile   ", all.ms(95), s -> s.ms(95));
    latency("Latency 99th percentile   ", all.ms(99), s -> s.ms(99));
    latency("Latency 99.9th percentile ", all.ms(99.9), s -> s.ms(99.9));
    latency("Latency max               ", all.maxMs(), Span::maxMs);
    out.println(line("Total partitions          : %10s ", g(all.partitions, 0), s -> g(s.partitions, 0)));
    out.println(line("Total rows                : %10s ", g(all.rows, 0), s -> g(s.rows, 0)));
    out.println(line("Total errors              : %10s ", g(all.errors, 0), s -> g(s.errors, 0)));
    long secs = (long) seconds;
    out.println(String.format("Total operation time      : %02d:%02d:%02d", secs / 3600, secs / 60 % 60, secs % 60));
    out.println(cpuLine(all.ops + all.errors));
    if (pacer != null) pacing(all, pacer);
    out.println();
  }

  private void pacing(Span all, Pacer pacer) {
    double service = all.ops == 0 ? Double.NaN : all.serviceNanos / all.ops / 1e6;
    out.println("Latency measured from     : intended start (fixed rate, no coordinated omission); service time mean "
        + f(service, 1) + " ms");
    var h = pacer.lateness;
    boolean none = h.getTotalCount() == 0;
    out.println(String.format("Pacing lateness           : median %s ms, .99 %s ms, max %s ms (%s ops whose worker waited)",
        f(none ? Double.NaN : h.getValueAtPercentile(50) / 1e6, 3), f(none ? Double.NaN : h.getValueAtPercentile(99) / 1e6, 3),
        f(none ? Double.NaN : h.getMaxValue() / 1e6, 3), g(h.getTotalCount(), 0)));
  }

  private void latency(String label, double v, java.util.function.ToDoubleFunction<Span> per) {
    out.println(line(label + ": %6s ms ", f(v, 1), s -> g(per.applyAsDouble(s), 1) + " ms"));
  }

  private String line(String format, String total, java.util.function.Function<Span, String> per) {
    List<String> items = new ArrayList<>();
    for (Live l : live) items.add(l.name + ": " + per.apply(l.total));
    return String.format(format, total) + "[" + String.join(", ", items) + "]";
  }

  /** Client CPU of this process (from /proc/self/stat), per operation. */
  private static String cpuLine(long ops) {
    double user = Double.NaN, sys = Double.NaN;
    try {
      String stat = Files.readString(Path.of("/proc/self/stat"));
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      double tick = 100.0; // USER_HZ on Linux
      user = Long.parseLong(fields[11]) / tick * 1e6 / ops;
      sys = Long.parseLong(fields[12]) / tick * 1e6 / ops;
    } catch (Exception e) {
      // not Linux: the line says NaN
    }
    return String.format("Client CPU per op         : %6s us [user: %s us, sys: %s us]", f(user + sys, 1), f(user, 1), f(sys, 1));
  }

  long totalErrors() {
    return live.stream().mapToLong(l -> l.total.errors).sum();
  }

  /** `%.Nf`, NaN spelled out. */
  static String f(double v, int decimals) {
    return Double.isNaN(v) ? "NaN" : String.format("%." + decimals + "f", v);
  }

  /** `%,.Nf`: thousands separated by commas. */
  static String g(double v, int decimals) {
    return Double.isNaN(v) ? "NaN" : String.format("%,." + decimals + "f", v);
  }
}
