// snogo: a Go program's sno, the 10 raw bytes it holds, stored in, looked up in and read back
// from a sno column through Go's database/sql, with lib/pq and with pgx v4 (run by
// test/drivers/run.sh, which builds it offline with Debian's lib/pq and pgx v4); and, in
// types.go, the Go rows of docs/applications.md's driver table and a ulid key looked up by a
// uuid. It imports no
// sno library: snoID below is the 10 bytes with the database/sql methods a sno type gives them
// (muyo/sno's ID among them), and its text is written from the published spec. The connection
// comes from PGHOST, PGPORT, PGUSER and PGDATABASE. Prints a line per driver setting and exits
// non-zero when any fails.
//
// snoID's driver value is its 10 bytes ([]byte), and its Scan takes 10 bytes or the
// 16-character text. What each driver does with them:
//   - pgx v4 sends a []byte for a parameter of a type it does not know as bytea's hex text,
//     \x and 20 hex digits, which sno's input reads (in the simple protocol too: a quoted
//     '\x...' literal); it reads a sno column as its text, which Scan reads.
//   - lib/pq with binary_parameters=yes sends a []byte in binary, which sno's binary input
//     reads. Without it, lib/pq sends a []byte as the raw text of the parameter's type
//     unless that type is bytea: the parameter is written $1::bytea, stored through the
//     assignment cast bytea -> sno, and compared as $1::bytea::sno.
//   - lib/pq reads every column as text and hands Scan the text as a []byte of 16 bytes; the
//     query reads id::bytea, 10 bytes, as a program holding only the bytes would.
package main

import (
	"bytes"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v4/stdlib"
	_ "github.com/lib/pq"
)

// The sno text alphabet of the spec: 5 bits a character, most significant first.
const alphabet = "23456789abcdefghijklmnopqrstuvwx"

type snoID [10]byte

func (id snoID) String() string {
	var out [16]byte
	var acc uint64
	bits := 0
	j := 0
	for _, b := range id {
		acc = acc<<8 | uint64(b)
		bits += 8
		for bits >= 5 {
			bits -= 5
			out[j] = alphabet[(acc>>uint(bits))&31]
			j++
		}
	}
	return string(out[:])
}

func parseSno(text string) (snoID, error) {
	var id snoID
	if len(text) != 16 {
		return id, fmt.Errorf("a sno's text is 16 characters, not %d", len(text))
	}
	var acc uint64
	bits := 0
	j := 0
	for i := 0; i < len(text); i++ {
		v := strings.IndexByte(alphabet, text[i])
		if v < 0 {
			return id, fmt.Errorf("%q is not a sno's character", text[i])
		}
		acc = acc<<5 | uint64(v)
		bits += 5
		if bits >= 8 {
			bits -= 8
			id[j] = byte(acc >> uint(bits))
			j++
		}
	}
	return id, nil
}

func (id snoID) Value() (driver.Value, error) { return id[:], nil }

func (id *snoID) Scan(v interface{}) error {
	var raw []byte
	switch x := v.(type) {
	case []byte:
		raw = x
	case string:
		raw = []byte(x)
	default:
		return fmt.Errorf("cannot scan %T into a sno", v)
	}
	switch len(raw) {
	case 10:
		copy(id[:], raw)
		return nil
	case 16:
		parsed, err := parseSno(string(raw))
		*id = parsed
		return err
	}
	return fmt.Errorf("a sno is 10 bytes or 16 characters, not %d", len(raw))
}

// newSno: a sno of the time now (4 ms units since 2010-01-01 UTC, the tick-tock bit clear),
// the metabyte, a partition and a sequence.
func newSno(meta byte, partition, sequence uint16) snoID {
	units := uint64(time.Now().UnixMilli()-1262304000000) / 4
	var id snoID
	ts := units << 1
	for i := 4; i >= 0; i-- {
		id[i] = byte(ts)
		ts >>= 8
	}
	id[5] = meta
	id[6], id[7] = byte(partition>>8), byte(partition)
	id[8], id[9] = byte(sequence>>8), byte(sequence)
	return id
}

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

// The IDs: the spec's worked example, the least and the greatest sno, and 200 of this time
// (metabytes 0 to 199, partition 7, sequences from 200 down).
func ids() []snoID {
	example, err := parseSno("brpk4q72xwf2m63l")
	if err != nil || example != (snoID{78, 111, 33, 96, 160, 255, 154, 10, 16, 51}) ||
		example.String() != "brpk4q72xwf2m63l" {
		fmt.Println("not ok: the spec's example brpk4q72xwf2m63l reads as", example, err)
		os.Exit(1)
	}
	var top snoID
	for i := range top {
		top[i] = 0xff
	}
	out := []snoID{{}, top, example}
	for i := 0; i < 200; i++ {
		out = append(out, newSno(byte(i), 7, uint16(200-i)))
	}
	return out
}

func run(s setting, want []snoID) error {
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
	// Read back in the server's order: each ID as it was, in the spec's order.
	rows, err := db.Query("SELECT " + s.scanID + ", n FROM snogo ORDER BY id")
	if err != nil {
		return err
	}
	defer rows.Close()
	var got []snoID
	for rows.Next() {
		var id snoID
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
	// The spec's order is the bytes' order.
	sorted := append([]snoID(nil), want...)
	sort.Slice(sorted, func(i, j int) bool { return bytes.Compare(sorted[i][:], sorted[j][:]) < 0 })
	if len(got) != len(sorted) {
		return fmt.Errorf("%d rows read back, not %d", len(got), len(sorted))
	}
	for i := range got {
		if got[i] != sorted[i] {
			return fmt.Errorf("position %d: %s in the server's order, %s in the spec's", i,
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
			fmt.Printf("ok: %s: %d snos stored, looked up by id = $1 and read back in order\n",
				s.name, len(want))
		}
	}
	if err := driverTable(); err != nil {
		fmt.Printf("not ok: the driver table: %v\n", err)
		failed = true
	} else {
		fmt.Println("ok: the driver table: uuid, bigint, ulid and sno through lib/pq and pgx v4, as docs/applications.md says")
	}
	if err := ulidLookups(); err != nil {
		fmt.Printf("not ok: a ulid key looked up by a uuid: %v\n", err)
		failed = true
	} else {
		fmt.Printf("ok: a ulid key looked up by a uuid: %d rows by id = $1 and id = $1::uuid, pgx v4 (pgtype.UUID, [16]byte), database/sql (pgx, lib/pq), the primary key's index in each plan\n", lookupRows/97+1)
	}
	if failed {
		os.Exit(1)
	}
}
