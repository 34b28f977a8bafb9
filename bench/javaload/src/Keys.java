// Keys of cassandra-stress's standard1 workload, made as cassandra-stress (and `helenus stress`)
// makes them, so that this program reads the rows the other clients wrote: a population seed
// becomes a 10-byte hex-like key through java.util.Random seeded with seed ^ salt, uniform(1..100B).
// Column values are random bytes of cassandra-stress's default size (5 columns of 34 bytes); their
// contents differ from cassandra-stress's but are as incompressible.
import com.datastax.oss.driver.internal.core.metadata.token.Murmur3Token;
import com.datastax.oss.driver.internal.core.metadata.token.Murmur3TokenFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;

final class Keys {
  static final int KEY_SIZE = 10, COLUMNS = 5, COLUMN_SIZE = 34;
  private static final long IDENTITY_MAX = 100_000_000_000L;
  private static final long KEY_SALT = salt("randomstrkey");

  private final Random identity = new Random();

  /** The first half of MurmurHash3 of the generator's name, as Cassandra's Murmur3 token. */
  private static long salt(String name) {
    ByteBuffer bytes = ByteBuffer.wrap(name.getBytes(StandardCharsets.UTF_8));
    return ((Murmur3Token) new Murmur3TokenFactory().hash(bytes)).getValue();
  }

  /** The key of population seed `seed`. */
  ByteBuffer key(long seed) {
    identity.setSeed(seed ^ KEY_SALT);
    uniform(); // the size seed, unused by a fixed size
    long value = uniform();
    byte[] key = new byte[KEY_SIZE];
    for (int i = 0; i < KEY_SIZE; i++) {
      int v = (int) (value & 15);
      key[i] = (byte) (v < 10 ? '0' + v : 'A' + v); // sic: 'A' + v, as cassandra-stress
      value >>>= 4;
    }
    return ByteBuffer.wrap(key);
  }

  private long uniform() {
    double u = identity.nextDouble();
    long v = (long) (u * (IDENTITY_MAX + 1.0) + (1.0 - u) * 1);
    return Math.max(1, Math.min(IDENTITY_MAX, v));
  }

  static ByteBuffer value() {
    byte[] v = new byte[COLUMN_SIZE];
    ThreadLocalRandom.current().nextBytes(v);
    return ByteBuffer.wrap(v);
  }
}
