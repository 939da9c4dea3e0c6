package snowflake;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Keys from snowflake_block_array() blocks for every thread of a process, in order
 * (docs/applications.md, "ID blocks"). Copy this file into your project.
 */
public final class IdBlocks {
  /** The largest block a role takes at the default snowflake.block_max_lead (100 ms). */
  public static final int LARGEST = 102401;

  /** Takes a block of n IDs: snowflake_block_array(n). */
  public interface Take {
    long[] block(int n) throws SQLException;
  }

  /** Takes blocks through a DataSource (a pool), one of its connections a block. */
  public static Take from(DataSource dataSource) {
    return n -> {
      try (Connection c = dataSource.getConnection();
          PreparedStatement s = c.prepareStatement("SELECT snowflake_block_array(?)")) {
        s.setInt(1, n);
        try (ResultSet r = s.executeQuery()) {
          r.next();
          Array a = r.getArray(1);
          Long[] boxed = (Long[]) a.getArray();
          a.free();
          long[] ids = new long[boxed.length];
          for (int i = 0; i < ids.length; i++) ids[i] = boxed[i];
          return ids;
        }
      }
    };
  }

  private final Take take;
  private final int size, largest;
  private long[] block = new long[0];
  private int used;

  /** Blocks of size (more when a request needs more, largest at most). */
  public IdBlocks(Take take, int size, int largest) {
    this.take = take;
    this.size = size;
    this.largest = largest;
  }

  public long next() throws SQLException {
    return next(1)[0];
  }

  /**
   * n IDs. A block's IDs that are not handed out are kept, not dropped; one block is taken at
   * a time, and callers wait for it. On an error, those gathered for this call are dropped (a
   * gap, never a duplicate).
   */
  public synchronized long[] next(int n) throws SQLException {
    if (n < 0) throw new IllegalArgumentException(n + " IDs asked for");
    long[] ids = new long[n];
    for (int got = 0; got < n; ) {
      if (used == block.length) {
        int want = Math.min(Math.max(size, n - got), largest);
        long[] taken = take.block(want);
        if (taken.length != want) throw new SQLException(taken.length + " IDs, not a block of " + want);
        block = taken;
        used = 0;
      }
      int k = Math.min(block.length - used, n - got);
      System.arraycopy(block, used, ids, got, k);
      used += k;
      got += k;
    }
    return ids;
  }
}
