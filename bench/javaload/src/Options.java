// The command line of JavaLoad: the subset of cassandra-stress's (and `helenus stress`'s) words that
// bench/run passes, with their meanings and defaults:
//
//   write|read|mixed [ratio(write=1,read=3)] [n=N | duration=N{s|m|h}] [no-warmup] [cl=LEVEL]
//   -rate threads=T [fixed=R/s] [inflight=K] -node HOST[,HOST...] -port native=P
//   -schema [keyspace=NAME] [replication(factor=F)]  -datacenter DC
//
// threads=T: T Java threads, each with at most K requests in flight (default 1, so that T threads
// put as many requests on the server as T cassandra-stress threads). Anything else is refused.
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

final class Options {
  String command;
  final Map<String, Integer> ratio = new LinkedHashMap<>();
  long count = -1;            // n=
  long durationNanos = -1;    // duration=
  boolean warmup = true;
  String consistency = "LOCAL_ONE";
  int threads = 50;
  int inflight = 1;
  double fixedRate = 0;       // op/s; 0: as fast as the threads go
  final List<String> nodes = new ArrayList<>();
  int port = 9042;
  String keyspace = "keyspace1";
  int replicationFactor = 1;
  String datacenter = "datacenter1";

  static final class Invalid extends Exception {
    Invalid(String message) {
      super(message);
    }
  }

  static Options parse(String[] args) throws Invalid {
    Options o = new Options();
    if (args.length == 0) throw new Invalid("a command is needed: write, read or mixed");
    o.command = args[0];
    switch (o.command) {
      case "write": o.ratio.put("write", 1); break;
      case "read": o.ratio.put("read", 1); break;
      case "mixed": break;
      default: throw new Invalid("unknown command " + o.command + " (write, read, mixed)");
    }
    String group = "";
    for (int i = 1; i < args.length; i++) {
      String w = args[i];
      if (w.startsWith("-")) {
        group = w;
        if (!List.of("-rate", "-node", "-port", "-schema", "-datacenter").contains(w)) {
          throw new Invalid("unknown option " + w);
        }
        continue;
      }
      o.word(group, w);
    }
    if (o.command.equals("mixed") && o.ratio.isEmpty()) {
      o.ratio.put("write", 1);
      o.ratio.put("read", 1);
    }
    if (o.nodes.isEmpty()) o.nodes.add("127.0.0.1");
    if (o.count < 0 && o.durationNanos < 0) o.count = 1_000_000;
    return o;
  }

  private void word(String group, String w) throws Invalid {
    switch (group) {
      case "": command(w); break;
      case "-rate": rate(w); break;
      case "-node": for (String n : w.split(",")) if (!n.isEmpty()) nodes.add(n); break;
      case "-port": port = (int) number(w, "native="); break;
      case "-schema": schema(w); break;
      case "-datacenter": datacenter = w; break;
      default: throw new Invalid("unexpected " + w);
    }
  }

  private void command(String w) throws Invalid {
    Matcher ratioWord = Pattern.compile("ratio\\((.*)\\)").matcher(w);
    if (w.startsWith("n=")) count = number(w, "n=");
    else if (w.startsWith("duration=")) durationNanos = duration(w.substring("duration=".length()));
    else if (w.equals("no-warmup")) warmup = false;
    else if (w.startsWith("cl=")) consistency = w.substring(3).toUpperCase();
    else if (ratioWord.matches()) {
      for (String part : ratioWord.group(1).split(",")) {
        String[] kv = part.split("=");
        if (kv.length != 2 || !List.of("write", "read").contains(kv[0])) throw new Invalid("bad ratio " + w);
        ratio.put(kv[0], (int) number(kv[1], ""));
      }
    } else throw new Invalid("unknown word " + w);
  }

  private void rate(String w) throws Invalid {
    if (w.startsWith("threads=")) threads = (int) number(w, "threads=");
    else if (w.startsWith("inflight=")) inflight = (int) number(w, "inflight=");
    else if (w.startsWith("fixed=") && w.endsWith("/s")) fixedRate = number(w.substring(0, w.length() - 2), "fixed=");
    else throw new Invalid("unknown -rate word " + w);
    if (threads < 1 || inflight < 1) throw new Invalid("threads and inflight must be at least 1");
  }

  private void schema(String w) throws Invalid {
    Matcher rf = Pattern.compile("replication\\(factor=(\\d+)\\)").matcher(w);
    if (w.startsWith("keyspace=")) keyspace = w.substring("keyspace=".length());
    else if (rf.matches()) replicationFactor = Integer.parseInt(rf.group(1));
    else throw new Invalid("unknown -schema word " + w);
  }

  private static long number(String w, String prefix) throws Invalid {
    if (!w.startsWith(prefix)) throw new Invalid("expected " + prefix + "N, got " + w);
    String digits = w.substring(prefix.length()).replace(",", "");
    long scale = 1;
    if (digits.endsWith("k")) scale = 1_000;
    if (digits.endsWith("m")) scale = 1_000_000;
    if (scale > 1) digits = digits.substring(0, digits.length() - 1);
    try {
      return Long.parseLong(digits) * scale;
    } catch (NumberFormatException e) {
      throw new Invalid("not a number: " + w);
    }
  }

  private static long duration(String v) throws Invalid {
    Matcher m = Pattern.compile("(\\d+)([smh])").matcher(v);
    if (!m.matches()) throw new Invalid("bad duration " + v + " (e.g. 30s, 2m, 1h)");
    long unit = Map.of("s", 1L, "m", 60L, "h", 3600L).get(m.group(2));
    return Long.parseLong(m.group(1)) * unit * 1_000_000_000L;
  }

  /** The population's size: cassandra-stress's default, n or a million. */
  long populationSize() {
    return count > 0 ? count : 1_000_000;
  }

  boolean onlyWrites() {
    return ratio.keySet().stream().allMatch(k -> k.equals("write"));
  }
}
