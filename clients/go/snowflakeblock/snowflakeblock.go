// Package snowflakeblock hands out keys from snowflake_block() blocks to every goroutine of a
// process, through database/sql with any driver (docs/applications.md, "ID blocks"). Copy
// this file into your module.
package snowflakeblock

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// Largest is the largest block a role takes at the default snowflake.block_max_lead (100 ms).
const Largest = 102401

// Take returns the block (first, last, count) of snowflake_block(n).
type Take func(ctx context.Context, n int) (first, last int64, count int, err error)

// FromDB takes blocks through db, one of its pooled connections a block.
func FromDB(db *sql.DB) Take {
	return func(ctx context.Context, n int) (int64, int64, int, error) {
		var first, last sql.NullInt64
		var count int
		err := db.QueryRowContext(ctx, "SELECT first, last, count FROM snowflake_block($1)", n).
			Scan(&first, &last, &count)
		return first.Int64, last.Int64, count, err
	}
}

// IDBlocks hands out the IDs of blocks of size (more when a request needs more, largest at
// most), in order. A block's IDs that are not handed out are kept, not dropped; one block
// is taken at a time, and callers wait for it.
type IDBlocks struct {
	take          Take
	size, largest int

	mu   sync.Mutex
	next int64 // the next ID of the current block
	left int   // IDs left in it, next included
}

func New(take Take, size, largest int) *IDBlocks {
	return &IDBlocks{take: take, size: size, largest: largest}
}

// Step is the rule of a block: the next sequence (the low 10 bits) up to 1023, then
// sequence 0 of the next millisecond (bits 23 up), the shard (bits 10 to 22) unchanged.
func Step(id int64) int64 {
	if id&0x3FF != 0x3FF {
		return id + 1
	}
	return (id>>23+1)<<23 | id&(0x1FFF<<10)
}

func (b *IDBlocks) Next(ctx context.Context) (int64, error) {
	ids, err := b.NextN(ctx, 1)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// NextN returns n IDs; on an error, those gathered for this call are dropped (a gap, never
// a duplicate).
func (b *IDBlocks) NextN(ctx context.Context, n int) ([]int64, error) {
	if n < 0 {
		return nil, fmt.Errorf("snowflakeblock: %d IDs asked for", n)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	ids := make([]int64, 0, n)
	for len(ids) < n {
		if b.left == 0 {
			if err := b.refill(ctx, n-len(ids)); err != nil {
				return nil, err
			}
		}
		for ; b.left > 0 && len(ids) < n; b.left-- {
			ids = append(ids, b.next)
			b.next = Step(b.next)
		}
	}
	return ids, nil
}

// refill takes a block of what is missing when that is more than size, at most largest.
func (b *IDBlocks) refill(ctx context.Context, missing int) error {
	n := b.size
	if missing > n {
		n = missing
	}
	if n > b.largest {
		n = b.largest
	}
	first, last, count, err := b.take(ctx, n)
	if err != nil {
		return err
	}
	// A block is on one shard and holds count IDs from first to last.
	span := (last>>23-first>>23)<<10 + last&0x3FF - first&0x3FF
	if count != n || first < 0 || last&(0x1FFF<<10) != first&(0x1FFF<<10) || span+1 != int64(count) {
		return fmt.Errorf("snowflakeblock: %d, %d, %d is not a block of %d", first, last, count, n)
	}
	b.next, b.left = first, count
	return nil
}
