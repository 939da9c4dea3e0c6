// snogo: muyo/sno's sno.ID stored in, looked up in and read back from a sno column through
// Go's database/sql, with lib/pq and with pgx v4 (run by test/drivers/run.sh, which builds it
// offline from the vendored muyo/sno and Debian's lib/pq and pgx v4). The connection comes
// from PGHOST, PGPORT, PGUSER and PGDATABASE. Prints a line per driver setting and exits
// non-zero when any fails.
//
// sno.ID's driver value is its 10 bytes ([]byte), and its Scan takes 10 bytes or the
// 16-character text. What each driver does with them:
//   - pgx v4 sends a []byte for a parameter of a type it does not know as bytea's hex text,
//     \x and 20 hex digits, which sno's input reads (in the simple protocol too: a quoted
//     '\x...' literal); it reads a sno column as its text, which Scan reads.
//   - lib/pq with binary_parameters=yes sends a []byte in binary, which sno's binary input
//     reads. Without it, lib/pq sends a []byte as the raw text of the parameter's type
//     unless that type is bytea: the parameter is written $1::bytea, stored through the
//     assignment cast bytea -> sno, and compared as $1::bytea::sno.
//   - lib/pq reads every column as text and hands Scan the text as a []byte, which sno.ID's
//     Scan refuses (16 bytes, not 10): the query reads id::bytea, 10 bytes.
package main

import (
	"database/sql"
	"fmt"
	"os"

	_ "github.com/jackc/pgx/v4/stdlib"
	_ "github.com/lib/pq"
	"github.com/muyo/sno"
)

type setting struct {
	name, driver, dsn      string
	insert, lookup, scanID string
}

var settings = []setting{
	{"pgx v4", "pgx", "sslmode=disable",
		"INSERT INTO snogo (id, n) VALUES ($1, $2)", "SELECT n FROM snogo WHERE id = $1", "id"},
	{"pgx v4, simple protocol", "pgx", "sslmode=disable prefer_simple_protocol=true",
		"INSERT INTO snogo (id, n) VALUES ($1, $2)", "SELECT n FROM snogo WHERE id = $1", "id"},
	{"lib/pq, binary_parameters=yes", "postgres", "sslmode=disable binary_parameters=yes",
		"INSERT INTO snogo (id, n) VALUES ($1, $2)", "SELECT n FROM snogo WHERE id = $1",
		"id::bytea"},
	{"lib/pq", "postgres", "sslmode=disable",
		"INSERT INTO snogo (id, n) VALUES ($1::bytea, $2)",
		"SELECT n FROM snogo WHERE id = $1::bytea::sno", "id::bytea"},
}

// The IDs: 200 of the reference's generator (metabytes 0 to 199), and the least and the
// greatest sno.
func ids() []sno.ID {
	out := []sno.ID{sno.Zero()}
	var top sno.ID
	for i := range top {
		top[i] = 0xff
	}
	out = append(out, top)
	for i := 0; i < 200; i++ {
		out = append(out, sno.New(byte(i)))
	}
	return out
}

func run(s setting, want []sno.ID) error {
	db, err := sql.Open(s.driver, s.dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	// One connection: the table is temporary.
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TEMP TABLE snogo (id sno PRIMARY KEY, n int NOT NULL)"); err != nil {
		return err
	}
	for n, id := range want {
		if _, err := db.Exec(s.insert, id, n); err != nil {
			return fmt.Errorf("insert %s: %w", id, err)
		}
	}
	for n, id := range want {
		var got int
		if err := db.QueryRow(s.lookup, id).Scan(&got); err != nil {
			return fmt.Errorf("look up %s: %w", id, err)
		}
		if got != n {
			return fmt.Errorf("look up %s: row %d, not %d", id, got, n)
		}
		var text string
		if err := db.QueryRow("SELECT id::text FROM snogo WHERE n = $1", n).Scan(&text); err != nil {
			return fmt.Errorf("text of %s: %w", id, err)
		}
		if text != id.String() {
			return fmt.Errorf("the server writes %s as %s", id, text)
		}
	}
	// Read back in the server's order: each ID as it was, in the reference's order.
	rows, err := db.Query("SELECT " + s.scanID + ", n FROM snogo ORDER BY id")
	if err != nil {
		return err
	}
	defer rows.Close()
	var got []sno.ID
	for rows.Next() {
		var id sno.ID
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return fmt.Errorf("scan: %w", err)
		}
		if id != want[n] {
			return fmt.Errorf("row %d reads back as %s, not %s", n, id, want[n])
		}
		got = append(got, id)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	sorted := append([]sno.ID(nil), want...)
	sno.Sort(sorted)
	if len(got) != len(sorted) {
		return fmt.Errorf("%d rows read back, not %d", len(got), len(sorted))
	}
	for i := range got {
		if got[i] != sorted[i] {
			return fmt.Errorf("position %d: %s in the server's order, %s in the reference's", i,
				got[i], sorted[i])
		}
	}
	return nil
}

func main() {
	want := ids()
	failed := false
	for _, s := range settings {
		if err := run(s, want); err != nil {
			fmt.Printf("not ok: %s: %v\n", s.name, err)
			failed = true
		} else {
			fmt.Printf("ok: %s: %d sno.IDs stored, looked up by id = $1 and read back in order\n",
				s.name, len(want))
		}
	}
	if failed {
		os.Exit(1)
	}
}
