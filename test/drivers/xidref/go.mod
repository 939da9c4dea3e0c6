// The reference judges of the rsxid and ksuid tests (test_xidref.sh): Debian's
// golang-github-rs-xid-dev and golang-github-segmentio-ksuid-dev, put beside a copy of this
// folder in the work folder by test/drivers/run.sh, and built offline (GOPROXY=off).
module xidref

go 1.19

require (
	github.com/rs/xid v0.0.0
	github.com/segmentio/ksuid v0.0.0
)

replace github.com/rs/xid => ./xid

replace github.com/segmentio/ksuid => ./ksuid
