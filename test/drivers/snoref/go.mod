// The reference judges of the sno and xid tests (test_snoref.sh): muyo/sno from the vendored
// sno-a543713.tar.gz and Debian's golang-github-rs-xid-dev, both put beside a copy of this
// folder in the work folder by test/drivers/run.sh, and built offline (GOPROXY=off).
module snoref

go 1.19

require (
	github.com/muyo/sno v0.0.0
	github.com/rs/xid v0.0.0
)

replace github.com/muyo/sno => ./sno

replace github.com/rs/xid => ./xid
