import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import snowflake.IdBlocks;

/**
 * Orders and their lines in two JDBC batches, in one transaction, their keys assigned from the
 * process's one IdBlocks before the INSERTs: no generated keys to read back, and the lines know
 * their order's key. With reWriteBatchedInserts=true in the URL, pgjdbc sends a batch as
 * multi-row INSERTs.
 */
public final class OrderBatch {
  public record Line(String item, int qty) {}

  public record Order(String customer, List<Line> lines) {}

  /** Inserts the orders; returns their keys. */
  public static long[] insert(Connection c, IdBlocks keys, List<Order> orders) throws SQLException {
    int count = orders.size();
    for (Order order : orders) count += order.lines().size();
    long[] ids = keys.next(count);
    long[] orderIds = new long[orders.size()];
    boolean autoCommit = c.getAutoCommit();
    c.setAutoCommit(false);
    try (PreparedStatement o = c.prepareStatement("INSERT INTO orders (id, customer) VALUES (?, ?)");
        PreparedStatement l = c.prepareStatement(
            "INSERT INTO order_lines (id, order_id, item, qty) VALUES (?, ?, ?, ?)")) {
      int k = 0;
      for (int i = 0; i < orders.size(); i++) {
        Order order = orders.get(i);
        orderIds[i] = ids[k++];
        o.setLong(1, orderIds[i]);
        o.setString(2, order.customer());
        o.addBatch();
        for (Line line : order.lines()) {
          l.setLong(1, ids[k++]);
          l.setLong(2, orderIds[i]);
          l.setString(3, line.item());
          l.setInt(4, line.qty());
          l.addBatch();
        }
      }
      o.executeBatch();
      l.executeBatch();
      c.commit();
    } catch (SQLException | RuntimeException e) {
      c.rollback();
      throw e;
    } finally {
      c.setAutoCommit(autoCommit);
    }
    return orderIds;
  }
}
