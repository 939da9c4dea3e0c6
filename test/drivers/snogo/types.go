// The Go rows of docs/applications.md's driver table, and a ulid primary key looked up by a
// uuid value. What database/sql hands a program that scans a uuid, bigint, ulid and sno column
// into an `any` (lib/pq, and pgx v4's stdlib driver), and what pgx v4's own interface returns
// (rows.Values()): each value's Go type, and its value against the server's text of it. Then a
// table (id ulid PRIMARY KEY, n int) looked up by `WHERE id = $1` ($1 a ulid, the server's
// choice) and `WHERE id = $1::uuid` (the ulid = uuid operator): pgx v4 with a pgtype.UUID
// (both) and a [16]byte (the second: pgx refuses it for a ulid), database/sql with pgx and a
// pgtype.UUID, and with lib/pq and the UUID's text (both); each must return its row, and
// EXPLAIN of the same query with the same parameter (enable_seqscan off) must use the
// primary key's index.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/jackc/pgtype"
	"github.com/jackc/pgx/v4"
)

// The values of one row, and the server's text of each.
const typesQuery = `SELECT u, u::text, b, b::text, l, l::text, s, s::text
  FROM (SELECT snowflake_uuidv7() AS u, snowflake() AS b, ulid() AS l, sno() AS s) t`

// A cell of the table: the Go type a driver hands over, and how its value reads as the
// server's text.
type cell struct {
	goType string
	text   func(v interface{}) string
}

var (
	asString = func(v interface{}) string { return v.(string) }
	asBytes  = func(v interface{}) string { return string(v.([]byte)) }
	asInt64  = func(v interface{}) string { return fmt.Sprint(v.(int64)) }
	asUUID   = func(v interface{}) string {
		b := v.([16]byte)
		return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	}
)

// The rows of the table as docs/applications.md writes them: uuid, bigint, ulid, sno.
var tableRows = []struct {
	name, driver, dsn string
	cells             [4]cell
}{
	{"lib/pq (database/sql)", "postgres", "sslmode=disable", [4]cell{
		{"[]uint8", asBytes}, {"int64", asInt64}, {"[]uint8", asBytes}, {"[]uint8", asBytes}}},
	{"pgx v4 (database/sql)", "pgx", "sslmode=disable", [4]cell{
		{"string", asString}, {"int64", asInt64}, {"string", asString}, {"string", asString}}},
	{"pgx v4 (rows.Values())", "", "sslmode=disable", [4]cell{
		{"[16]uint8", asUUID}, {"int64", asInt64}, {"string", asString}, {"string", asString}}},
}

func checkCells(name string, cells [4]cell, values []interface{}, texts []string) error {
	kinds := []string{"uuid", "bigint", "ulid", "sno"}
	for i, c := range cells {
		if got := fmt.Sprintf("%T", values[i]); got != c.goType {
			return fmt.Errorf("%s: a %s arrives as %s, not %s", name, kinds[i], got, c.goType)
		}
		if got := c.text(values[i]); got != texts[i] {
			return fmt.Errorf("%s: a %s arrives as %q, the server's text is %q", name, kinds[i], got, texts[i])
		}
	}
	return nil
}

// driverTable checks each row of the table on 20 rows of fresh IDs.
func driverTable() error {
	ctx := context.Background()
	for _, r := range tableRows {
		for k := 0; k < 20; k++ {
			values := make([]interface{}, 4)
			texts := make([]string, 4)
			if r.driver == "" {
				conn, err := pgx.Connect(ctx, r.dsn)
				if err != nil {
					return err
				}
				rows, err := conn.Query(ctx, typesQuery)
				if err != nil {
					conn.Close(ctx)
					return err
				}
				rows.Next()
				all, err := rows.Values()
				rows.Close()
				conn.Close(ctx)
				if err != nil {
					return err
				}
				for i := 0; i < 4; i++ {
					values[i], texts[i] = all[2*i], all[2*i+1].(string)
				}
			} else {
				db, err := sql.Open(r.driver, r.dsn)
				if err != nil {
					return err
				}
				err = db.QueryRow(typesQuery).Scan(&values[0], &texts[0], &values[1], &texts[1],
					&values[2], &texts[2], &values[3], &texts[3])
				db.Close()
				if err != nil {
					return err
				}
			}
			if err := checkCells(r.name, r.cells, values, texts); err != nil {
				return err
			}
		}
	}
	return nil
}

const lookupRows = 2000

// The table's IDs as uuids ([16]byte), n from 1 up.
func lookupIDs(ctx context.Context, conn *pgx.Conn) ([][16]byte, error) {
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off;
		CREATE TEMP TABLE ulid_lookup (id ulid PRIMARY KEY, n int NOT NULL);
		INSERT INTO ulid_lookup SELECT ulid(), g FROM generate_series(1, 2000) g;
		ANALYZE ulid_lookup`); err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, "SELECT id::uuid FROM ulid_lookup ORDER BY n")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids [][16]byte
	for rows.Next() {
		var u pgtype.UUID
		if err := rows.Scan(&u); err != nil {
			return nil, err
		}
		ids = append(ids, u.Bytes)
	}
	return ids, rows.Err()
}

// A query with one parameter, through one driver: the first column of each row, as text.
type querier func(q string, arg interface{}) ([]string, error)

func pgxQuerier(ctx context.Context, conn *pgx.Conn) querier {
	return func(q string, arg interface{}) ([]string, error) {
		rows, err := conn.Query(ctx, q, arg)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			v, err := rows.Values()
			if err != nil {
				return nil, err
			}
			out = append(out, fmt.Sprint(v[0]))
		}
		return out, rows.Err()
	}
}

func sqlQuerier(db *sql.DB) querier {
	return func(q string, arg interface{}) ([]string, error) {
		rows, err := db.Query(q, arg)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var v interface{}
			if err := rows.Scan(&v); err != nil {
				return nil, err
			}
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			out = append(out, fmt.Sprint(v))
		}
		return out, rows.Err()
	}
}

// Both conditions: $1 typed by the server as ulid (the column's type), and a uuid.
var bothWheres = []string{"id = $1", "id = $1::uuid"}

// lookups: every 97th row of ids by each condition with the parameter param makes of its uuid,
// and EXPLAIN of each with the first row's.
func lookups(name string, q querier, ids [][16]byte, wheres []string, param func(id [16]byte) interface{}) error {
	for _, where := range wheres {
		for n := 1; n <= len(ids); n += 97 {
			got, err := q("SELECT n FROM ulid_lookup WHERE "+where, param(ids[n-1]))
			if err != nil {
				return fmt.Errorf("%s, WHERE %s: %w", name, where, err)
			}
			if len(got) != 1 || got[0] != fmt.Sprint(n) {
				return fmt.Errorf("%s, WHERE %s: rows %v, not [%d]", name, where, got, n)
			}
		}
		plan, err := q("EXPLAIN SELECT n FROM ulid_lookup WHERE "+where, param(ids[0]))
		if err != nil {
			return fmt.Errorf("%s, WHERE %s: EXPLAIN: %w", name, where, err)
		}
		if !strings.Contains(strings.Join(plan, "\n"), "ulid_lookup_pkey") {
			return fmt.Errorf("%s, WHERE %s: the plan does not use ulid_lookup_pkey:\n%s", name,
				where, strings.Join(plan, "\n"))
		}
	}
	return nil
}

func pgtypeUUID(id [16]byte) interface{} { return pgtype.UUID{Bytes: id, Status: pgtype.Present} }

func uuidText(id [16]byte) interface{} { return asUUID(id) }

// ulidLookups: pgx v4's own interface with a pgtype.UUID and with a [16]byte; database/sql
// with pgx and a pgtype.UUID, and with lib/pq and the UUID's text (lib/pq sends a parameter
// as untyped text). Each on one connection: the table is temporary.
func ulidLookups() error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, "sslmode=disable")
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	ids, err := lookupIDs(ctx, conn)
	if err != nil {
		return err
	}
	if len(ids) != lookupRows {
		return fmt.Errorf("%d rows, not %d", len(ids), lookupRows)
	}
	q := pgxQuerier(ctx, conn)
	if err := lookups("pgx v4, a pgtype.UUID", q, ids, bothWheres, pgtypeUUID); err != nil {
		return err
	}
	// pgx v4 encodes a [16]byte for a uuid parameter alone: $1 of type ulid refuses it.
	raw := func(id [16]byte) interface{} { return id }
	if err := lookups("pgx v4, a [16]byte", q, ids, []string{"id = $1::uuid"}, raw); err != nil {
		return err
	}
	if _, err := q("SELECT n FROM ulid_lookup WHERE id = $1", ids[0]); err == nil ||
		!strings.Contains(err.Error(), "Cannot encode [16]uint8") {
		return fmt.Errorf("pgx v4, a [16]byte for a ulid parameter: %v, not pgx's refusal", err)
	}
	for _, d := range []struct {
		name, driver string
		param        func(id [16]byte) interface{}
	}{
		{"database/sql with pgx v4, a pgtype.UUID", "pgx", pgtypeUUID},
		{"database/sql with lib/pq, the UUID's text", "postgres", uuidText},
	} {
		db, err := sql.Open(d.driver, "sslmode=disable")
		if err != nil {
			return err
		}
		db.SetMaxOpenConns(1)
		// The same rows in this connection's temporary table, from an array's text.
		texts := make([]string, len(ids))
		for i, id := range ids {
			texts[i] = asUUID(id)
		}
		_, err = db.Exec(`SET enable_seqscan = off;
			CREATE TEMP TABLE ulid_lookup (id ulid PRIMARY KEY, n int NOT NULL)`)
		if err == nil {
			_, err = db.Exec(`INSERT INTO ulid_lookup
				SELECT u::uuid::ulid, n FROM unnest($1::text[]) WITH ORDINALITY AS t(u, n)`,
				"{"+strings.Join(texts, ",")+"}")
		}
		if err == nil {
			_, err = db.Exec("ANALYZE ulid_lookup")
		}
		if err == nil {
			err = lookups(d.name, sqlQuerier(db), ids, bothWheres, d.param)
		}
		db.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
