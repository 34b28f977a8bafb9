// The schedule of a fixed-rate run: operation i is due at start + i / rate, whichever thread takes
// it. A thread waits for its operation's due time; latency counts from that time (no coordinated
// omission), and how late a waiting thread woke is the client's own error (pacing lateness).
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.ConcurrentHistogram;

final class Pacer {
  private final long start;
  private final double nanosPerOp;
  private final AtomicLong slot = new AtomicLong();
  final ConcurrentHistogram lateness = new ConcurrentHistogram(60_000_000_000L, 3);

  Pacer(double opsPerSecond, long start) {
    this.start = start;
    this.nanosPerOp = 1e9 / opsPerSecond;
  }

  /** Waits for the next operation's due time and returns it (System.nanoTime). */
  long next() {
    long due = start + (long) (slot.getAndIncrement() * nanosPerOp);
    long now = System.nanoTime();
    if (now >= due) return due;
    while ((now = System.nanoTime()) < due) LockSupport.parkNanos(due - now);
    lateness.recordValue(now - due);
    return due;
  }
}
