// The reference judge of the sno tests (test_snoref.sh): muyo/sno from the vendored
// sno-a543713.tar.gz, put beside a copy of this folder in the work folder by
// test/drivers/run.sh, and built offline (GOPROXY=off). (rs/xid's and segmentio/ksuid's
// judge: xidref/.)
module snoref

go 1.19

require github.com/muyo/sno v0.0.0

replace github.com/muyo/sno => ./sno
