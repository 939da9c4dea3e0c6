import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.postgresql.util.PGobject;

/**
 * The JDBC row of docs/applications.md's driver table, and a ulid primary key looked up by a
 * java.util.UUID (run by test/drivers/run.sh, the JDBC URL its argument). getObject of a uuid,
 * bigint, ulid and sno column: each value's class, and its value against the server's text.
 * Then a table (id ulid PRIMARY KEY, n int) looked up by {@code WHERE id = ?} with
 * {@code setObject(1, uuid)} (pgjdbc sends a uuid: the ulid = uuid operator) and by
 * {@code id = ANY(?)} with an array of UUIDs: each returns its rows, and EXPLAIN of the same
 * statement with the same parameter (enable_seqscan off) uses the primary key's index. Prints a
 * line per check, then "N passed, N failed"; exits non-zero when any fails.
 */
public final class TypesTest {
  static final int ROWS = 2000;

  /** uuid as java.util.UUID, bigint as Long, ulid and sno as PGobject of their type and text. */
  static String table(Connection c) throws SQLException {
    String[] kinds = {"uuid", "bigint", "ulid", "sno"};
    String[] classes = {"java.util.UUID", "java.lang.Long", "org.postgresql.util.PGobject",
        "org.postgresql.util.PGobject"};
    try (Statement s = c.createStatement()) {
      for (int k = 0; k < 20; k++) {
        try (ResultSet r = s.executeQuery("SELECT u, u::text, b, b::text, l, l::text, s, s::text"
            + " FROM (SELECT snowflake_uuidv7() AS u, snowflake() AS b, ulid() AS l, sno() AS s) t")) {
          r.next();
          for (int i = 0; i < 4; i++) {
            Object v = r.getObject(2 * i + 1);
            String text = r.getString(2 * i + 2);
            Checks.require(v.getClass().getName().equals(classes[i]),
                "a " + kinds[i] + " arrives as " + v.getClass().getName() + ", not " + classes[i]);
            String got = v instanceof PGobject ? ((PGobject) v).getValue() : v.toString();
            Checks.require(got.equals(text), "a " + kinds[i] + " arrives as " + got + ", the server's text is " + text);
            if (v instanceof PGobject) {
              Checks.require(((PGobject) v).getType().equals(kinds[i]), "a PGobject of type " + ((PGobject) v).getType());
            }
          }
        }
      }
    }
    return "20 rows of fresh IDs";
  }

  /** EXPLAIN's lines must name the primary key's index. */
  static void usesPkey(PreparedStatement explain, String what) throws SQLException {
    StringBuilder plan = new StringBuilder();
    try (ResultSet r = explain.executeQuery()) {
      while (r.next()) plan.append(r.getString(1)).append('\n');
    }
    Checks.require(plan.toString().contains("ulid_lookup_pkey"), what + ": the plan does not use ulid_lookup_pkey:\n" + plan);
  }

  static String lookups(Connection c) throws SQLException {
    List<UUID> ids = new ArrayList<>();
    try (Statement s = c.createStatement()) {
      s.execute("SET enable_seqscan = off");
      s.execute("CREATE TEMP TABLE ulid_lookup (id ulid PRIMARY KEY, n int NOT NULL)");
      s.execute("INSERT INTO ulid_lookup SELECT ulid(), g FROM generate_series(1, " + ROWS + ") g");
      s.execute("ANALYZE ulid_lookup");
      try (ResultSet r = s.executeQuery("SELECT id::uuid FROM ulid_lookup ORDER BY n")) {
        while (r.next()) ids.add(r.getObject(1, UUID.class));
      }
    }
    Checks.require(ids.size() == ROWS, ids.size() + " rows");
    int looked = 0;
    // Past pgjdbc's prepareThreshold (5): the server-prepared statement is checked too.
    try (PreparedStatement q = c.prepareStatement("SELECT n FROM ulid_lookup WHERE id = ?");
        PreparedStatement explain = c.prepareStatement("EXPLAIN SELECT n FROM ulid_lookup WHERE id = ?")) {
      for (int n = 1; n <= ROWS; n += 97, looked++) {
        q.setObject(1, ids.get(n - 1));
        try (ResultSet r = q.executeQuery()) {
          Checks.require(r.next() && r.getInt(1) == n && !r.next(), "WHERE id = ?: not row " + n);
        }
      }
      explain.setObject(1, ids.get(0));
      usesPkey(explain, "WHERE id = ?");
    }
    UUID[] some = {ids.get(4), ids.get(400), ids.get(1999)};
    try (PreparedStatement q = c.prepareStatement("SELECT n FROM ulid_lookup WHERE id = ANY(?) ORDER BY n");
        PreparedStatement explain = c.prepareStatement("EXPLAIN SELECT n FROM ulid_lookup WHERE id = ANY(?)")) {
      Array a = c.createArrayOf("uuid", some);
      q.setArray(1, a);
      List<Integer> got = new ArrayList<>();
      try (ResultSet r = q.executeQuery()) {
        while (r.next()) got.add(r.getInt(1));
      }
      Checks.require(got.equals(List.of(5, 401, 2000)), "WHERE id = ANY(?): rows " + got);
      explain.setArray(1, a);
      usesPkey(explain, "WHERE id = ANY(?)");
    }
    return looked + " rows by WHERE id = ? and 3 by = ANY(?), the primary key's index in each plan";
  }

  public static void main(String[] args) throws Exception {
    try (Connection c = DriverManager.getConnection(args[0])) {
      Checks.check("the driver table: uuid, bigint, ulid and sno through getObject", () -> table(c));
      Checks.check("a ulid key looked up by a java.util.UUID (setObject, createArrayOf)", () -> lookups(c));
    }
    Checks.finish();
  }
}
