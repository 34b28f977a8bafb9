// The population seeds operations draw, as cassandra-stress's defaults: writes only: the sequence
// 1..N shared by all threads (wrapping); otherwise gaussian(1..N) per thread (mean in the middle,
// three standard deviations to each edge), N being n= or a million.
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

final class Population {
  private final boolean sequential;
  private final long size;
  private final AtomicLong next = new AtomicLong();

  Population(Options o) {
    this.sequential = o.onlyWrites();
    this.size = o.populationSize();
  }

  long seed(Random threadRandom) {
    if (sequential) return 1 + Math.floorMod(next.getAndIncrement(), size);
    double mean = (1 + size) / 2.0, stdev = ((size - 1) / 2.0) / 3.0;
    long v = (long) (stdev * threadRandom.nextGaussian() + mean);
    return Math.max(1, Math.min(size, v));
  }
}
