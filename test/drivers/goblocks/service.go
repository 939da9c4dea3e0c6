package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"

	"snowflakeblock"
)

// An order and its lines, their keys assigned before the INSERTs from the process's one
// IDBlocks, in one transaction: no RETURNING, and the lines know their order's key.
type Order struct {
	Customer string `json:"customer"`
	Lines    []Line `json:"lines"`
}

type Line struct {
	Item string `json:"item"`
	Qty  int    `json:"qty"`
}

func insertOrder(ctx context.Context, db *sql.DB, keys *snowflakeblock.IDBlocks, o Order) (int64, error) {
	ids, err := keys.NextN(ctx, 1+len(o.Lines))
	if err != nil {
		return 0, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "INSERT INTO orders (id, customer) VALUES ($1, $2)",
		ids[0], o.Customer); err != nil {
		return 0, err
	}
	for i, l := range o.Lines {
		if _, err := tx.ExecContext(ctx,
			"INSERT INTO order_lines (id, order_id, item, qty) VALUES ($1, $2, $3, $4)",
			ids[1+i], ids[0], l.Item, l.Qty); err != nil {
			return 0, err
		}
	}
	return ids[0], tx.Commit()
}

// POST /orders: {"customer": ..., "lines": [{"item": ..., "qty": ...}]} -> {"id": "..."}
// (the key as a string: JavaScript readers lose IDs above 2^53 as numbers).
func ordersHandler(db *sql.DB, keys *snowflakeblock.IDBlocks) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var o Order
		if err := json.NewDecoder(r.Body).Decode(&o); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id, err := insertOrder(r.Context(), db, keys, o)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		json.NewEncoder(w).Encode(struct {
			ID int64 `json:"id,string"`
		}{id})
	})
}

// In main: one IDBlocks for the whole process, shared by every request.
//
//	db, err := sql.Open("pgx", os.Getenv("DATABASE_URL")) // or "postgres" (lib/pq)
//	keys := snowflakeblock.New(snowflakeblock.FromDB(db), 1000, snowflakeblock.Largest)
//	http.Handle("/orders", ordersHandler(db, keys))
