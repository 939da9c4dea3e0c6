// xidref: the reference implementations' side of the rsxid and ksuid tests (test_xidref.sh),
// rs/xid and segmentio/ksuid as Debian ships them.
//
//	xidref make-rsxids N    N xids of rs/xid (New, NewWithTime over the whole 32-bit second
//	                        range, the smallest and the largest), one a line: text, hex, Unix s,
//	                        machine hex, pid, counter; then "sorted" and the texts in
//	                        rs/xid's order (xid.Sort)
//	xidref make-ksuids N    N KSUIDs of segmentio/ksuid (New, NewRandomWithTime over the
//	                        whole range, Nil and Max): text, hex, Unix s, payload hex; then
//	                        "sorted" and the texts in ksuid.Sort's order
//	xidref cases-rsxid N    N texts to parse, edge cases first, then random ones (valid,
//	xidref cases-ksuid N    mutated, cut, extended, case changed), each with the library's
//	                        verdict: hex of the text's bytes, "ok" and the hex of the ID, or
//	                        "err"; for ksuid also "bug74", a text Parse accepts though it holds
//	                        a character outside base62 (segmentio/ksuid issue 74)
//	xidref read-rsxids      reads IDs some other party made (the server), text and hex a
//	xidref read-ksuids      line, and prints each with the library's reading of its fields
//	                        (as make-*), or stops at the first the library reads otherwise:
//	                        the hook for checking the server's generators
//	xidref sort-rsxids      reads texts, one a line, and prints them in the library's order
//	xidref sort-ksuids      (xid.Sort, ksuid.Sort)
package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rs/xid"
	"github.com/segmentio/ksuid"
)

const (
	xidAlphabet   = "0123456789abcdefghijklmnopqrstuv"
	base62        = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	ksuidEpoch    = 1400000000
	ksuidMaxText  = "aWgEPTl1tmebfsQzFP4bxwgy80V"
	xidTextLen    = 20
	ksuidTextLen  = 27
	xidNineteen   = "9m4e2mr0ui3e8a215n4"
	xidReference  = "9m4e2mr0ui3e8a215n4g"
	ksuidExample  = "0ujtsYcgvSTl8PAuAdqWYSMnLOv"
	ksuidExample2 = "0ujzPyRiIAffKhBux4PvQdDqMHY"
)

// Characters a mutation puts in: letters of either case, digits, punctuation, and characters
// of two and three bytes in UTF-8. No tab, newline, backslash or NUL: every input is also a
// PostgreSQL text.
var pool = []string{"0", "9", "a", "g", "v", "w", "z", "A", "V", "W", "Z", "-", "_", "!", "?",
	" ", ".", "+", "/", "=", "~", "é", "€", "ß"}

func fail(format string, args ...interface{}) {
	fmt.Printf(format+"\n", args...)
	os.Exit(1)
}

func count(args []string) int {
	if len(args) != 1 {
		fail("usage: xidref COMMAND N")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 0 {
		fail("not a count: %q", args[0])
	}
	return n
}

func makeRsxids(n int) {
	r := rand.New(rand.NewSource(46))
	ids := []xid.ID{}
	for _, b := range [][]byte{make([]byte, 12), bytes.Repeat([]byte{0xff}, 12)} {
		id, err := xid.FromBytes(b)
		if err != nil {
			fail("FromBytes: %v", err)
		}
		ids = append(ids, id)
	}
	for len(ids) < n {
		if len(ids)%2 == 0 {
			ids = append(ids, xid.New())
		} else {
			ids = append(ids, xid.NewWithTime(time.Unix(r.Int63n(1<<32), 0)))
		}
	}
	for _, id := range ids {
		fmt.Printf("%s\t%s\t%d\t%s\t%d\t%d\n", id.String(), hex.EncodeToString(id.Bytes()),
			id.Time().Unix(), hex.EncodeToString(id.Machine()), id.Pid(), id.Counter())
	}
	fmt.Println("sorted")
	xid.Sort(ids)
	for _, id := range ids {
		fmt.Println(id.String())
	}
}

// The texts of standard input, one a line.
func textLines() []string {
	var out []string
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		out = append(out, in.Text())
	}
	return out
}

func sortRsxids() {
	var ids []xid.ID
	for _, t := range textLines() {
		id, err := xid.FromString(t)
		if err != nil {
			fail("rs/xid refuses %q: %v", t, err)
		}
		ids = append(ids, id)
	}
	xid.Sort(ids)
	for _, id := range ids {
		fmt.Println(id.String())
	}
}

func sortKsuids() {
	var ids []ksuid.KSUID
	for _, t := range textLines() {
		id, err := ksuid.Parse(t)
		if err != nil {
			fail("segmentio/ksuid refuses %q: %v", t, err)
		}
		ids = append(ids, id)
	}
	ksuid.Sort(ids)
	for _, id := range ids {
		fmt.Println(id.String())
	}
}

func makeKsuids(n int) {
	r := rand.New(rand.NewSource(46))
	ksuid.SetRand(r)
	ids := []ksuid.KSUID{ksuid.Nil, ksuid.Max}
	for len(ids) < n {
		if len(ids)%2 == 0 {
			ids = append(ids, ksuid.New())
		} else {
			id, err := ksuid.NewRandomWithTime(time.Unix(ksuidEpoch+r.Int63n(1<<32), 0))
			if err != nil {
				fail("NewRandomWithTime: %v", err)
			}
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		fmt.Printf("%s\t%s\t%d\t%s\n", id.String(), hex.EncodeToString(id.Bytes()),
			id.Time().Unix(), hex.EncodeToString(id.Payload()))
	}
	fmt.Println("sorted")
	ksuid.Sort(ids)
	for _, id := range ids {
		fmt.Println(id.String())
	}
}

// mutate changes a valid text in one of several ways, or leaves it.
func mutate(r *rand.Rand, s, alphabet string) string {
	switch r.Intn(8) {
	case 0: // valid as it is
		return s
	case 1, 2: // one character replaced by another of the pool
		i := r.Intn(len(s))
		return s[:i] + pool[r.Intn(len(pool))] + s[i+1:]
	case 3: // the last character replaced by any of the alphabet (xid: its padding bits)
		return s[:len(s)-1] + string(alphabet[r.Intn(len(alphabet))])
	case 4: // cut
		return s[:len(s)-1-r.Intn(3)]
	case 5: // extended
		return s + string(alphabet[r.Intn(len(alphabet))])
	case 6: // the other case
		if r.Intn(2) == 0 {
			return strings.ToUpper(s)
		}
		return strings.ToLower(s)
	default: // one character's case changed
		i := r.Intn(len(s))
		c := s[i : i+1]
		if u := strings.ToUpper(c); u != c {
			c = u
		} else {
			c = strings.ToLower(c)
		}
		return s[:i] + c + s[i+1:]
	}
}

func casesRsxid(n int) {
	r := rand.New(rand.NewSource(4601))
	cases := []string{xidReference, "00000000000000000000", "vvvvvvvvvvvvvvvvvvvg",
		"vvvvvvvvvvvvvvvvvvvv", "9m4e2mr0ui3e8a215n4h", "9m4e2mr0ui3e8a215n40",
		"9M4E2MR0UI3E8A215N4G", "9m4e2mr0ui3e8a215n4G", xidNineteen, xidReference + "0",
		"", "9m4e2mr0ui3e8a215n4é", "9m4e2mr0ui3e8a215né", "é9m4e2mr0ui3e8a215n4",
		"9m4e2mr0ui3e8a21 n4g", "9m4e2mr0ui3e8a215n4w", "wm4e2mr0ui3e8a215n4g",
		"TYjhW2D0huQoQS", "TYjhW2D0huQoQS3kdk", "invalid"}
	for len(cases) < n {
		b := make([]byte, 12)
		r.Read(b)
		id, err := xid.FromBytes(b)
		if err != nil {
			fail("FromBytes: %v", err)
		}
		cases = append(cases, mutate(r, id.String(), xidAlphabet))
	}
	for _, c := range cases[:n] {
		id, err := xid.FromString(c)
		if err != nil {
			fmt.Printf("%s\terr\t\n", hex.EncodeToString([]byte(c)))
			continue
		}
		if id.String() != c {
			fail("rs/xid reads %q and writes it as %q", c, id.String())
		}
		fmt.Printf("%s\tok\t%s\n", hex.EncodeToString([]byte(c)), hex.EncodeToString(id.Bytes()))
	}
}

func isBase62(s string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(base62, s[i]) < 0 {
			return false
		}
	}
	return true
}

func casesKsuid(n int) {
	r := rand.New(rand.NewSource(4602))
	cases := []string{ksuidExample, ksuidExample2, "0pN1Own7255s7jwpwy495bAZeEa",
		"000000000000000000000000000", ksuidMaxText, "aWgEPTl1tmebfsQzFP4bxwgy80W",
		"aWgEPTl1tmebfsQzFP4bxwgy810", "aWgEPTl1tmebfsQzFP4bxwgy8zz", "aaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"zzzzzzzzzzzzzzzzzzzzzzzzzzz", "b00000000000000000000000000", "aX000000000000000000000000",
		"aWgEPTl1tmebfsQzFP4bxwgy80!", "0??????????????????????????", ksuidExample[:26],
		ksuidExample + "0", "", "0ujtsYcgvSTl8PAuAdqWYSMnLOé", "0ujtsYcgvSTl8PAuAdqWYSMnLé",
		"0ujtsYcgvSTl8PAuAdqWY-MnLOv", "123"}
	for len(cases) < n {
		switch r.Intn(3) {
		case 0: // any 27 characters of base62: about 4 in 10 are above the largest
			b := make([]byte, ksuidTextLen)
			for i := range b {
				b[i] = base62[r.Intn(len(base62))]
			}
			cases = append(cases, string(b))
		default:
			b := make([]byte, 20)
			r.Read(b)
			id, err := ksuid.FromBytes(b)
			if err != nil {
				fail("FromBytes: %v", err)
			}
			cases = append(cases, mutate(r, id.String(), base62))
		}
	}
	for _, c := range cases[:n] {
		id, err := ksuid.Parse(c)
		switch {
		case err != nil:
			fmt.Printf("%s\terr\t\n", hex.EncodeToString([]byte(c)))
		case !isBase62(c):
			fmt.Printf("%s\tbug74\t%s\n", hex.EncodeToString([]byte(c)), hex.EncodeToString(id.Bytes()))
		case id.String() != c:
			fail("segmentio/ksuid reads %q and writes it as %q", c, id.String())
		default:
			fmt.Printf("%s\tok\t%s\n", hex.EncodeToString([]byte(c)), hex.EncodeToString(id.Bytes()))
		}
	}
}

// lines reads "text<TAB>hex" lines and calls f with each; f prints the line or stops.
func lines(f func(n int, text, hexBytes string)) {
	in := bufio.NewScanner(os.Stdin)
	n := 0
	for in.Scan() {
		n++
		parts := strings.Split(in.Text(), "\t")
		if len(parts) != 2 {
			fail("line %d: %d fields, not 2: %q", n, len(parts), in.Text())
		}
		f(n, parts[0], parts[1])
	}
}

func readRsxids() {
	lines(func(n int, text, hexBytes string) {
		id, err := xid.FromString(text)
		if err != nil {
			fail("line %d: rs/xid does not read %q: %v", n, text, err)
		}
		if id.String() != text || hex.EncodeToString(id.Bytes()) != hexBytes {
			fail("line %d: %q is %s to rs/xid, %s to the server", n, text,
				hex.EncodeToString(id.Bytes()), hexBytes)
		}
		fmt.Printf("%s\t%s\t%d\t%s\t%d\t%d\n", text, hexBytes, id.Time().Unix(),
			hex.EncodeToString(id.Machine()), id.Pid(), id.Counter())
	})
}

func readKsuids() {
	lines(func(n int, text, hexBytes string) {
		id, err := ksuid.Parse(text)
		if err != nil {
			fail("line %d: segmentio/ksuid does not read %q: %v", n, text, err)
		}
		if id.String() != text || hex.EncodeToString(id.Bytes()) != hexBytes {
			fail("line %d: %q is %s to segmentio/ksuid, %s to the server", n, text,
				hex.EncodeToString(id.Bytes()), hexBytes)
		}
		fmt.Printf("%s\t%s\t%d\t%s\n", text, hexBytes, id.Time().Unix(),
			hex.EncodeToString(id.Payload()))
	})
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: xidref make-rsxids N | make-ksuids N | cases-rsxid N | cases-ksuid N | read-rsxids | read-ksuids")
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "make-rsxids":
		makeRsxids(count(args))
	case "make-ksuids":
		makeKsuids(count(args))
	case "cases-rsxid":
		casesRsxid(count(args))
	case "cases-ksuid":
		casesKsuid(count(args))
	case "read-rsxids":
		readRsxids()
	case "read-ksuids":
		readKsuids()
	case "sort-rsxids":
		sortRsxids()
	case "sort-ksuids":
		sortKsuids()
	default:
		fail("unknown command %q", os.Args[1])
	}
}
