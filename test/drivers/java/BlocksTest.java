import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.postgresql.ds.PGSimpleDataSource;
import snowflake.IdBlocks;

/**
 * clients/java/snowflake/IdBlocks.java and the JDBC batching recipe (OrderBatch.java) against
 * the server (run by test/drivers/run.sh from test/drivers, the JDBC URL its argument). Prints
 * a line per check, then "N passed, N failed"; exits non-zero when any fails.
 */
public final class BlocksTest {
  static final int THREADS = 16;
  static PGSimpleDataSource ds;

  /** The server's IDs of a block, by snowflake_block_ids(). */
  static List<Long> serverIds(Connection c, long first, long last) throws SQLException {
    try (PreparedStatement s = c.prepareStatement("SELECT snowflake_block_ids(?, ?)")) {
      s.setLong(1, first);
      s.setLong(2, last);
      List<Long> ids = new ArrayList<>();
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) ids.add(r.getLong(1));
      }
      return ids;
    }
  }

  /** docs/applications.md holds each file whole in a ```java block. */
  static String documented() throws Exception {
    String doc = Files.readString(Path.of("..", "..", "docs", "applications.md"));
    for (String f : new String[] {"../../clients/java/snowflake/IdBlocks.java", "java/OrderBatch.java"}) {
      Checks.require(doc.contains("```java\n" + Files.readString(Path.of(f)) + "```\n"),
          "docs/applications.md does not hold " + f + " as it is");
    }
    return null;
  }

  /** A block's array is snowflake_block_ids() of its ends; past the lead bound, 22023. */
  static String arrays() throws Exception {
    IdBlocks.Take take = IdBlocks.from(ds);
    try (Connection c = ds.getConnection()) {
      for (int n : new int[] {1, 2, 1023, 1024, 1025, 3000, 65536, IdBlocks.LARGEST}) {
        long[] ids = take.block(n);
        Checks.require(ids.length == n, "a block of " + n + ": " + ids.length + " IDs");
        List<Long> server = serverIds(c, ids[0], ids[n - 1]);
        Checks.require(server.size() == n, "a block of " + n + ": the server expands " + server.size());
        for (int i = 0; i < n; i++) Checks.require(server.get(i) == ids[i], "a block of " + n + ": ID " + i);
        if (n <= 1024) Checks.require(ids[n - 1] == ids[0] + n - 1, "a block of " + n + " not consecutive");
      }
    }
    try {
      new IdBlocks(IdBlocks.from(ds), IdBlocks.LARGEST + 1, IdBlocks.LARGEST + 1).next();
      throw new AssertionError("a block of " + (IdBlocks.LARGEST + 1) + " was taken");
    } catch (SQLException e) {
      Checks.require("22023".equals(e.getSQLState()), "SQLSTATE " + e.getSQLState());
    }
    try {
      new IdBlocks(IdBlocks.from(ds), 1000, IdBlocks.LARGEST).next(-1);
      throw new AssertionError("-1 IDs: no exception");
    } catch (IllegalArgumentException e) {
      // expected
    }
    return null;
  }

  /**
   * One IdBlocks shared by 16 threads: one block taken at a time, no key twice, every key in a
   * block the server gave, each thread's keys rising, nothing dropped but the last block's rest;
   * an empty request and one of more than the largest block.
   */
  static String threads() throws Exception {
    List<long[]> taken = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger taking = new AtomicInteger(), most = new AtomicInteger();
    IdBlocks.Take take = IdBlocks.from(ds);
    IdBlocks keys = new IdBlocks(n -> {
      most.accumulateAndGet(taking.incrementAndGet(), Math::max);
      try {
        long[] block = take.block(n);
        taken.add(block);
        return block;
      } finally {
        taking.decrementAndGet();
      }
    }, 1000, IdBlocks.LARGEST);
    List<long[]> got = run(THREADS, t -> {
      List<Long> mine = new ArrayList<>();
      for (int k = 0; k < 300; k++) {
        if (k % 3 == 0) mine.add(keys.next());
        else for (long id : keys.next(k % 7)) mine.add(id);
      }
      return mine.stream().mapToLong(Long::longValue).toArray();
    });
    Checks.require(keys.next(0).length == 0, "0 IDs");
    int huge = 250000;
    long[] hugeIds = keys.next(huge);
    Checks.require(hugeIds.length == huge, huge + " IDs: " + hugeIds.length);
    got.add(hugeIds);
    Set<Long> reserved = new HashSet<>();
    for (long[] block : taken) for (long id : block) reserved.add(id);
    Set<Long> seen = new HashSet<>();
    int handed = 0, duplicates = 0, outside = 0;
    for (long[] ids : got) {
      for (int i = 0; i < ids.length; i++) {
        Checks.require(i == 0 || ids[i - 1] < ids[i], "a thread's keys are not in order");
        handed++;
        if (!seen.add(ids[i])) duplicates++;
        if (!reserved.contains(ids[i])) outside++;
      }
    }
    String figures = String.format(
        "%d keys (%d in one request) from %d blocks, %d duplicates, %d outside the blocks, %d left in the last",
        handed, huge, taken.size(), duplicates, outside, reserved.size() - handed);
    Checks.require(most.get() == 1, most.get() + " blocks taken at once: " + figures);
    Checks.require(duplicates == 0 && outside == 0 && reserved.size() - handed < IdBlocks.LARGEST, figures);
    return figures;
  }

  interface Work<T> {
    T run(int thread) throws Exception;
  }

  /** Runs work on n threads at once; the first failure is thrown. */
  static <T> List<T> run(int n, Work<T> work) throws Exception {
    List<T> results = Collections.synchronizedList(new ArrayList<>());
    List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < n; t++) {
      int thread = t;
      threads.add(new Thread(() -> {
        try {
          results.add(work.run(thread));
        } catch (Throwable e) {
          errors.add(e);
        }
      }));
    }
    for (Thread t : threads) t.start();
    for (Thread t : threads) t.join();
    if (!errors.isEmpty()) throw new Exception(errors.get(0));
    return results;
  }

  /** The batching recipe on 16 threads, a connection each, one IdBlocks for all. */
  static String batches() throws Exception {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS order_lines, orders");
      s.execute("CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake(), customer text NOT NULL)");
      s.execute("CREATE TABLE order_lines (id bigint PRIMARY KEY DEFAULT snowflake(),"
          + " order_id bigint NOT NULL REFERENCES orders, item text NOT NULL, qty int NOT NULL)");
    }
    IdBlocks keys = new IdBlocks(IdBlocks.from(ds), 1000, IdBlocks.LARGEST);
    int orders = 25;
    run(THREADS, t -> {
      try (Connection c = ds.getConnection()) {
        for (int batch = 0; batch < 4; batch++) {
          List<OrderBatch.Order> list = new ArrayList<>();
          for (int i = 0; i < orders; i++) {
            List<OrderBatch.Line> lines = new ArrayList<>();
            for (int l = 0; l < i % 5; l++) lines.add(new OrderBatch.Line("i" + l, l + 1));
            list.add(new OrderBatch.Order("c" + t, lines));
          }
          Checks.require(OrderBatch.insert(c, keys, list).length == orders, "keys of a batch");
        }
      }
      return null;
    });
    try (Connection c = ds.getConnection(); Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT (SELECT count(*) FROM orders),"
            + " (SELECT count(*) FROM order_lines)")) {
      r.next();
      long nOrders = r.getLong(1), nLines = r.getLong(2);
      long wantLines = 0;
      for (int i = 0; i < orders; i++) wantLines += 4L * THREADS * (i % 5);
      Checks.require(nOrders == 4L * THREADS * orders && nLines == wantLines,
          nOrders + " orders and " + nLines + " lines");
      s.execute("DROP TABLE order_lines, orders");
      return nOrders + " orders, " + nLines + " lines in " + 4 * THREADS + " batches";
    }
  }

  /**
   * The benchmark's part (bench/blocks.sh): keys for 1,000,000 parents and 3,000,000 children
   * handed out by one IdBlocks of blocks of 1,000 to 8 threads, each asking for a batch's 4,000
   * at a time; the blocks come through one open connection, as from a pool.
   */
  static void bench(long total) throws Exception {
    try (Connection c = ds.getConnection()) {
      AtomicInteger blocks = new AtomicInteger();
      IdBlocks.Take fromPool = IdBlocks.from(ds);
      IdBlocks.Take take =
          n -> {
            blocks.incrementAndGet();
            try (PreparedStatement s = c.prepareStatement("SELECT snowflake_block_array(?)")) {
              s.setInt(1, n);
              try (ResultSet r = s.executeQuery()) {
                r.next();
                Long[] boxed = (Long[]) r.getArray(1).getArray();
                long[] ids = new long[boxed.length];
                for (int i = 0; i < ids.length; i++) ids[i] = boxed[i];
                return ids;
              }
            }
          };
      fromPool.block(1); // the first reservation: not part of the time
      IdBlocks keys = new IdBlocks(take, 1000, IdBlocks.LARGEST);
      AtomicInteger handed = new AtomicInteger();
      List<Thread> threads = new ArrayList<>();
      List<Exception> errors = Collections.synchronizedList(new ArrayList<>());
      long t0 = System.nanoTime();
      for (int t = 0; t < 8; t++) {
        Thread th =
            new Thread(
                () -> {
                  try {
                    while (handed.getAndAdd(4000) < total) keys.next(4000);
                  } catch (Exception e) {
                    errors.add(e);
                  }
                });
        threads.add(th);
        th.start();
      }
      for (Thread th : threads) th.join();
      double took = (System.nanoTime() - t0) / 1e9;
      if (!errors.isEmpty()) throw errors.get(0);
      long keysHanded = Math.min(handed.get(), total + 0L);
      System.out.printf(
          "| Java `IdBlocks`, JDBC (`snowflake_block_array`), 8 threads | %d | %.2f | %.0f | %d |%n",
          keysHanded, took, keysHanded / took, blocks.get());
    }
  }

  public static void main(String[] args) throws Exception {
    ds = new PGSimpleDataSource();
    ds.setURL(args[0]);
    if (args.length == 3 && args[1].equals("bench")) {
      bench(Long.parseLong(args[2]));
      return;
    }
    Checks.check("the documented code is this code", BlocksTest::documented);
    Checks.check("a block's array is snowflake_block_ids() of its ends", BlocksTest::arrays);
    Checks.check("one IdBlocks, " + THREADS + " threads", BlocksTest::threads);
    Checks.check("JDBC batches with keys from blocks, " + THREADS + " threads", BlocksTest::batches);
    Checks.finish();
  }
}
