// Keys of cassandra-stress's standard1 workload, made as cassandra-stress (and `helenus stress`)
// makes them, so that this program reads the rows the other clients wrote: a population seed
// becomes a 10-byte hex-like key through java.util.Random seeded with seed ^ salt, uniform(1..100B);
// each column's value (cassandra-stress's default: 5 columns of 34 bytes) comes from Cassandra's
// FasterRandom seeded from the key and the column, so `helenus stress read` finds the values it expects
// in rows this program wrote.
import com.datastax.oss.driver.internal.core.metadata.token.Murmur3Token;
import com.datastax.oss.driver.internal.core.metadata.token.Murmur3TokenFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;

final class Keys {
  static final int KEY_SIZE = 10, COLUMNS = 5, COLUMN_SIZE = 34;
  private static final long IDENTITY_MAX = 100_000_000_000L;
  private static final long KEY_SALT = salt("randomstrkey");
  private static final long[] COLUMN_SALTS = new long[COLUMNS];

  static {
    for (int i = 0; i < COLUMNS; i++) COLUMN_SALTS[i] = salt("randomstrC" + i);
  }

  private final Random identity = new Random();
  private final FasterRandom bytes = new FasterRandom();

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

  /** The value of column `column` of the row keyed `key`. */
  ByteBuffer value(ByteBuffer key, int column) {
    long rowSeed = 0;
    for (int i = key.position(); i < key.limit(); i++) rowSeed = 31 * rowSeed + key.get(i);
    identity.setSeed(rowSeed ^ COLUMN_SALTS[column]);
    bytes.setSeed(~uniform());
    byte[] v = new byte[COLUMN_SIZE];
    for (int at = 0; at < COLUMN_SIZE; at += 8) {
      long word = bytes.nextLong();
      for (int b = 0; b < 8 && at + b < COLUMN_SIZE; b++) v[at + b] = (byte) (word >>> (8 * b));
    }
    return ByteBuffer.wrap(v);
  }

  /** Cassandra's org.apache.cassandra.utils.FasterRandom: xorshift, reseeded every 32 draws. */
  private static final class FasterRandom {
    private final Random random = new Random();
    private long seed;
    private int reseed;

    void setSeed(long seed) {
      this.seed = seed;
      rollover();
    }

    private void rollover() {
      reseed = 0;
      random.setSeed(seed);
      seed = random.nextLong();
    }

    long nextLong() {
      if (++reseed == 32) rollover();
      long s = seed;
      s ^= s >> 12;
      s ^= s << 25;
      s ^= s >> 27;
      seed = s;
      return s * 2685821657736338717L;
    }
  }
}
