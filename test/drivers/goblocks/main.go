// goblocks: clients/go/snowflakeblock's IDBlocks through Go's database/sql, with lib/pq and
// with pgx v4's stdlib driver (run by test/drivers/run.sh, which builds it offline in GOPATH
// mode from Debian's drivers). The connection comes from PGHOST, PGPORT, PGUSER and
// PGDATABASE. Prints a line per check and driver, then "N passed, N failed"; exits non-zero
// when any fails.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v4/stdlib"
	_ "github.com/lib/pq"

	"snowflakeblock"
)

const goroutines = 16

// The documented code is this code: docs/applications.md holds each file whole in a ```go
// block. Run from test/drivers.
func documented() error {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "applications.md"))
	if err != nil {
		return err
	}
	for _, f := range []string{"../../clients/go/snowflakeblock/snowflakeblock.go", "goblocks/service.go"} {
		src, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if !bytes.Contains(doc, append(append([]byte("```go\n"), src...), "```\n"...)) {
			return fmt.Errorf("docs/applications.md does not hold %s as it is", f)
		}
	}
	return nil
}

// The server's IDs of a block, by snowflake_block_ids().
func serverIDs(ctx context.Context, db *sql.DB, first, last int64) ([]int64, error) {
	rows, err := db.QueryContext(ctx, "SELECT snowflake_block_ids($1, $2)", first, last)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// The rule (Step) gives snowflake_block_ids() for blocks of 1 to the largest; a request of
// a block past the lead bound is an error, not a smaller block.
func rule(ctx context.Context, db *sql.DB) error {
	for _, n := range []int{1, 2, 1023, 1024, 1025, 3000, 65536, snowflakeblock.Largest} {
		first, last, count, err := snowflakeblock.FromDB(db)(ctx, n)
		if err != nil {
			return err
		}
		server, err := serverIDs(ctx, db, first, last)
		if err != nil {
			return err
		}
		if count != n || len(server) != n {
			return fmt.Errorf("a block of %d: count %d, %d IDs", n, count, len(server))
		}
		for i, id := 0, first; i < n; i, id = i+1, snowflakeblock.Step(id) {
			if server[i] != id {
				return fmt.Errorf("a block of %d: ID %d is %d, the server's %d", n, i, id, server[i])
			}
		}
		if n <= 1024 && last != first+int64(n)-1 {
			return fmt.Errorf("a block of %d is not consecutive: %d to %d", n, first, last)
		}
	}
	keys := snowflakeblock.New(snowflakeblock.FromDB(db), snowflakeblock.Largest+1, snowflakeblock.Largest+1)
	if _, err := keys.Next(ctx); err == nil || !strings.Contains(err.Error(), "past its bound") {
		return fmt.Errorf("a block of %d: %v, not the lead bound's error", snowflakeblock.Largest+1, err)
	}
	if _, err := keys.NextN(ctx, -1); err == nil {
		return fmt.Errorf("-1 IDs: no error")
	}
	return nil
}

// One IDBlocks shared by 16 goroutines: one block taken at a time, no key twice, every key in
// a block the server gave, each goroutine's keys rising, nothing dropped but the last block's
// rest; an empty request and one of more than the largest block.
func threads(ctx context.Context, db *sql.DB) (string, error) {
	type block struct{ first, last int64 }
	var taken []block
	var mu sync.Mutex
	taking, most := 0, 0 // blocks being taken at once, and the most seen
	take := snowflakeblock.FromDB(db)
	keys := snowflakeblock.New(func(ctx context.Context, n int) (int64, int64, int, error) {
		mu.Lock()
		if taking++; taking > most {
			most = taking
		}
		mu.Unlock()
		first, last, count, err := take(ctx, n)
		mu.Lock()
		taking--
		taken = append(taken, block{first, last})
		mu.Unlock()
		return first, last, count, err
	}, 1000, snowflakeblock.Largest)
	got := make([][]int64, goroutines)
	errs := make([]error, goroutines)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; k < 300 && errs[g] == nil; k++ {
				if k%3 == 0 {
					id, err := keys.Next(ctx)
					got[g], errs[g] = append(got[g], id), err
				} else {
					ids, err := keys.NextN(ctx, k%7)
					got[g], errs[g] = append(got[g], ids...), err
				}
			}
		}(g)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return "", err
		}
	}
	if ids, err := keys.NextN(ctx, 0); err != nil || len(ids) != 0 {
		return "", fmt.Errorf("0 IDs: %d IDs, %v", len(ids), err)
	}
	const huge = 250000
	hugeIDs, err := keys.NextN(ctx, huge)
	if err != nil || len(hugeIDs) != huge {
		return "", fmt.Errorf("%d IDs: %d IDs, %v", huge, len(hugeIDs), err)
	}
	reserved := map[int64]bool{}
	for _, b := range taken {
		ids, err := serverIDs(ctx, db, b.first, b.last)
		if err != nil {
			return "", err
		}
		for _, id := range ids {
			reserved[id] = true
		}
	}
	seen := map[int64]bool{}
	handed, duplicates, outside := 0, 0, 0
	for _, ids := range append(got, hugeIDs) {
		if !sort.SliceIsSorted(ids, func(i, j int) bool { return ids[i] < ids[j] }) {
			return "", fmt.Errorf("a goroutine's keys are not in order")
		}
		for _, id := range ids {
			handed++
			if seen[id] {
				duplicates++
			}
			if !reserved[id] {
				outside++
			}
			seen[id] = true
		}
	}
	figures := fmt.Sprintf("%d keys (%d in one request) from %d blocks, %d duplicates, %d outside the blocks, %d left in the last",
		handed, huge, len(taken), duplicates, outside, len(reserved)-handed)
	if most != 1 {
		return "", fmt.Errorf("%d blocks taken at once: %s", most, figures)
	}
	if duplicates != 0 || outside != 0 || len(reserved)-handed >= snowflakeblock.Largest {
		return "", fmt.Errorf("%s", figures)
	}
	return figures, nil
}

// The service's handler (service.go) under 16 concurrent clients: every order and line in,
// each line under its order.
func service(ctx context.Context, db *sql.DB) (string, error) {
	if _, err := db.ExecContext(ctx, `DROP TABLE IF EXISTS order_lines, orders;
		CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake(), customer text NOT NULL);
		CREATE TABLE order_lines (id bigint PRIMARY KEY DEFAULT snowflake(),
			order_id bigint NOT NULL REFERENCES orders, item text NOT NULL, qty int NOT NULL)`); err != nil {
		return "", err
	}
	keys := snowflakeblock.New(snowflakeblock.FromDB(db), 1000, snowflakeblock.Largest)
	handler := ordersHandler(db, keys)
	const orders = 25
	errs := make(chan error, goroutines*orders)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < orders; i++ {
				o := Order{Customer: fmt.Sprintf("c%d", g)}
				for l := 0; l < i%5; l++ {
					o.Lines = append(o.Lines, Line{Item: fmt.Sprintf("i%d", l), Qty: l + 1})
				}
				body, _ := json.Marshal(o)
				w := httptest.NewRecorder()
				handler.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/orders", bytes.NewReader(body)).WithContext(ctx))
				var out struct {
					ID int64 `json:"id,string"`
				}
				if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &out) != nil || out.ID == 0 {
					errs <- fmt.Errorf("POST /orders: %d %s", w.Code, w.Body.String())
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return "", err
	}
	var nOrders, nLines, wantLines int
	if err := db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM orders),
		(SELECT count(*) FROM order_lines)`).Scan(&nOrders, &nLines); err != nil {
		return "", err
	}
	for i := 0; i < orders; i++ {
		wantLines += goroutines * (i % 5)
	}
	if nOrders != goroutines*orders || nLines != wantLines {
		return "", fmt.Errorf("%d orders and %d lines, not %d and %d", nOrders, nLines, goroutines*orders, wantLines)
	}
	_, err := db.ExecContext(ctx, "DROP TABLE order_lines, orders")
	return fmt.Sprintf("%d orders, %d lines", nOrders, nLines), err
}

// The benchmark's part (bench/blocks.sh): keys for 1,000,000 parents and 3,000,000 children
// handed out by one IDBlocks of blocks of 1,000 to 8 goroutines, each asking for a batch's
// 4,000 at a time; a line per driver.
func bench(total int) error {
	for _, d := range []struct{ name, driver string }{{"lib/pq", "postgres"}, {"pgx v4", "pgx"}} {
		db, err := sql.Open(d.driver, "sslmode=disable")
		if err != nil {
			return err
		}
		ctx := context.Background()
		if _, err := db.ExecContext(ctx, "SELECT snowflake()"); err != nil {
			return err
		}
		blocks := 0
		take := snowflakeblock.FromDB(db)
		keys := snowflakeblock.New(func(ctx context.Context, n int) (int64, int64, int, error) {
			blocks++ // one block at a time: under the allocator's lock
			return take(ctx, n)
		}, 1000, snowflakeblock.Largest)
		var handed int64
		var mu sync.Mutex
		errs := make([]error, 8)
		var wg sync.WaitGroup
		t0 := time.Now()
		for g := range errs {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for {
					mu.Lock()
					if handed >= int64(total) {
						mu.Unlock()
						return
					}
					handed += 4000
					mu.Unlock()
					if _, errs[g] = keys.NextN(ctx, 4000); errs[g] != nil {
						return
					}
				}
			}(g)
		}
		wg.Wait()
		took := time.Since(t0).Seconds()
		db.Close()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		fmt.Printf("| Go `IDBlocks`, database/sql with %s, 8 goroutines | %d | %.2f | %.0f | %d |\n",
			d.name, handed, took, float64(handed)/took, blocks)
	}
	return nil
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "bench" {
		var total int
		if _, err := fmt.Sscan(os.Args[2], &total); err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		if err := bench(total); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		return
	}
	passed, failed := 0, 0
	report := func(name string, figures string, err error) {
		if err != nil {
			failed++
			fmt.Printf("FAIL %s: %v\n", name, err)
			return
		}
		passed++
		if figures != "" {
			name += ": " + figures
		}
		fmt.Printf("ok   %s\n", name)
	}
	report("the documented code is this code", "", documented())
	for _, d := range []struct{ name, driver string }{{"lib/pq", "postgres"}, {"pgx v4", "pgx"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		db, err := sql.Open(d.driver, "sslmode=disable")
		if err != nil {
			report(d.name, "", err)
			cancel()
			continue
		}
		report(d.name+": the rule gives snowflake_block_ids()", "", rule(ctx, db))
		figures, err := threads(ctx, db)
		report(d.name+fmt.Sprintf(": one IDBlocks, %d goroutines", goroutines), figures, err)
		figures, err = service(ctx, db)
		report(d.name+fmt.Sprintf(": the service, %d concurrent clients", goroutines), figures, err)
		db.Close()
		cancel()
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
	if failed != 0 {
		os.Exit(1)
	}
}
