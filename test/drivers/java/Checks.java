/**
 * What the Java tests of the driver suite share: a line per check, "ok" or "FAIL" with its
 * figures or error, then "N passed, N failed", and the exit status.
 */
final class Checks {
  private static int passed, failed;

  private Checks() {}

  interface Check {
    String run() throws Exception;
  }

  /** Runs c; prints its name and figures (its result, when not null), or its error. */
  static void check(String name, Check c) {
    try {
      String figures = c.run();
      passed++;
      System.out.println("ok   " + name + (figures == null ? "" : ": " + figures));
    } catch (Throwable e) {
      failed++;
      System.out.println("FAIL " + name + ": " + e);
    }
  }

  static void require(boolean ok, String what) {
    if (!ok) throw new AssertionError(what);
  }

  /** Prints the counts and exits, non-zero when any check failed. */
  static void finish() {
    System.out.println(passed + " passed, " + failed + " failed");
    System.exit(failed == 0 ? 0 : 1);
  }
}
