// snoref: the reference implementation's side of the sno tests (test_snoref.sh).
//
//	snoref check-server GAP_MS < rows   reads the server's snos, one a line: n, the call's
//	                                    start and end (Unix ms), the metabyte asked, the
//	                                    partition asked, text, hex of the 10 bytes; checks each
//	                                    with muyo/sno and prints "ok N" or what is wrong
//	                                    (GAP_MS: how far the IDs' clock may be ahead)
//	snoref make-snos                    prints 4,000 snos of muyo/sno (metabytes 0 and 200,
//	                                    partitions 1 and 65000): text, hex, Unix ms, meta,
//	                                    partition, sequence, tick; then "sorted" and the texts
//	                                    in the reference's order
package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/muyo/sno"
)

func fail(format string, args ...interface{}) {
	fmt.Printf(format+"\n", args...)
	os.Exit(1)
}

func atoi(s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		fail("not a number: %q", s)
	}
	return v
}

func checkServer(gapMs int64) {
	in := bufio.NewScanner(os.Stdin)
	var prev sno.ID
	lastOfMeta := map[byte]sno.ID{}
	count := 0
	for in.Scan() {
		f := strings.Split(in.Text(), "\t")
		if len(f) != 7 {
			fail("line %d: %d fields, not 7: %q", count+1, len(f), in.Text())
		}
		n, start, end, meta, partition := f[0], atoi(f[1]), atoi(f[2]), atoi(f[3]), atoi(f[4])
		id, err := sno.FromEncodedString(f[5])
		if err != nil {
			fail("row %s: the reference does not read %q: %v", n, f[5], err)
		}
		if id.String() != f[5] {
			fail("row %s: the reference writes %q as %q", n, f[5], id.String())
		}
		if hex.EncodeToString(id.Bytes()) != f[6] {
			fail("row %s: %q is %s to the reference, %s to the server", n, f[5],
				hex.EncodeToString(id.Bytes()), f[6])
		}
		if int64(id.Meta()) != meta || int64(id.Partition().AsUint16()) != partition {
			fail("row %s: %q has meta %d, partition %d; asked %d, %d", n, f[5], id.Meta(),
				id.Partition().AsUint16(), meta, partition)
		}
		if id[4]&1 != 0 {
			fail("row %s: %q has the tick-tock bit set", n, f[5])
		}
		// The call's window: from the 4 ms unit that holds its start less a millisecond (slack
		// for two clocks read at different instants) to its end, and the
		// IDs' clock may be ahead of the system clock by what snowflake_status() said before.
		ms := id.Time().UnixNano() / 1e6
		if low := start - 1 - (start-1)%4; ms < low || ms > end+gapMs {
			fail("row %s: %q is at %d ms, outside the call's %d to %d (+%d)", n, f[5], ms,
				start, end, gapMs)
		}
		// The server's stream: (time, sequence) strictly increase in issue order whatever the
		// metabyte; the snos of one metabyte strictly increase in the reference's order (in the
		// bytes the metabyte comes before the sequence).
		if count > 0 && (id.Time().Before(prev.Time()) ||
			id.Time().Equal(prev.Time()) && id.Sequence() <= prev.Sequence()) {
			fail("row %s: %q is not after the one before, %q, in (time, sequence)", n, f[5],
				prev.String())
		}
		if last, ok := lastOfMeta[id.Meta()]; ok && id.Compare(last) <= 0 {
			fail("row %s: %q is not above %q, the last of metabyte %d", n, f[5], last.String(),
				id.Meta())
		}
		lastOfMeta[id.Meta()] = id
		prev = id
		count++
	}
	fmt.Printf("ok %d\n", count)
}

func makeSnos() {
	r := rand.New(rand.NewSource(36))
	var ids []sno.ID
	for _, partition := range []uint16{1, 65000} {
		g, err := sno.NewGenerator(&sno.GeneratorSnapshot{
			Partition: sno.Partition{byte(partition >> 8), byte(partition)},
		}, nil)
		if err != nil {
			fail("NewGenerator: %v", err)
		}
		for _, meta := range []byte{0, 200} {
			for i := 0; i < 1000; i++ {
				if i%2 == 0 {
					ids = append(ids, g.New(meta))
				} else {
					// Any time sno holds, 2010 to 2079, to the millisecond.
					ms := 1262304000000 + r.Int63n(2198535000000)
					ids = append(ids, g.NewWithTime(meta, time.UnixMilli(ms)))
				}
			}
		}
	}
	for _, id := range ids {
		tick := "f"
		if id[4]&1 != 0 {
			tick = "t"
		}
		fmt.Printf("%s\t%s\t%d\t%d\t%d\t%d\t%s\n", id.String(), hex.EncodeToString(id.Bytes()),
			id.Time().UnixNano()/1e6, id.Meta(), id.Partition().AsUint16(), id.Sequence(), tick)
	}
	fmt.Println("sorted")
	sno.Sort(ids)
	for _, id := range ids {
		fmt.Println(id.String())
	}
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: snoref check-server GAP_MS | make-snos")
	}
	switch os.Args[1] {
	case "check-server":
		if len(os.Args) != 3 {
			fail("usage: snoref check-server GAP_MS")
		}
		checkServer(atoi(os.Args[2]))
	case "make-snos":
		makeSnos()
	default:
		fail("unknown command %q", os.Args[1])
	}
}
