EXTENSION = snowflake
EXTVERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" $(EXTENSION).control)

MODULE_big = snowflake
CORE_OBJS = src/core/clock.o src/core/chacha.o src/core/id128.o src/core/ulid_codec.o \
	src/core/lease.o src/core/etcd_json.o src/core/etcd_transport.o src/core/etcd_store.o \
	src/core/foreign_codec.o src/core/typeid_codec.o src/core/mask.o \
	src/core/sno_codec.o src/core/xid_codec.o src/core/ksuid_codec.o
# The glue: one file per SQL family (snowflake, uuidv7, ulid, typeid, mask, foreign, observe,
# status), the module's start-up and settings, and what the families share (src/glue/*.hpp).
GLUE_OBJS = src/glue/module.o src/glue/settings.o src/glue/system_clock.o src/glue/random.o \
	src/glue/timestamps.o src/glue/streams.o src/glue/reservation.o \
	src/glue/reservation_storage.o src/glue/snowflake.o src/glue/uuidv7.o src/glue/ulid.o \
	src/glue/foreign.o src/glue/observe.o src/glue/status.o src/glue/lease_wait.o \
	src/glue/lease_worker.o src/glue/typeid.o src/glue/mask_keys.o src/glue/mask_sql.o \
	src/glue/other_databases.o src/glue/sno.o src/glue/rsxid.o src/glue/ksuid.o src/glue/second_ids.o \
	src/glue/text_input.o src/glue/block.o \
	src/glue/hints.o
OBJS = $(CORE_OBJS) $(GLUE_OBJS)

# extension/ holds the install script, copied to its versioned name at build time, and the
# upgrade scripts from each released version (none yet: 1.0.0 is the first release); only
# those are installed. sql/ and expected/ hold the regression tests alone.
DATA_built = extension/$(EXTENSION)--$(EXTVERSION).sql
DATA = $(wildcard extension/$(EXTENSION)--*--*.sql)

# The mask key tool (scripts/mask_key.sh), installed beside pg_config as snowflake_mask_key,
# so that the README's key recipe works from a source install and from the package alike.
SCRIPTS_built = snowflake_mask_key

REGRESS = $(patsubst sql/%.sql,%,$(wildcard sql/*.sql))
# The install scripts of released versions as released (test/released/, none while 1.0.0 is
# the only release), for the upgrade test alone, which creates each and updates it: `make
# install-released` puts them beside the installed files. Not part of `make install` nor of
# the package: a user creates the current version, and updates an older one. The package's
# autopkgtest tests it as users get it: WITHOUT_RELEASED=1 leaves the upgrade test out there
# once there are any.
RELEASED_SCRIPTS = $(wildcard test/released/$(EXTENSION)--*.sql)
ifneq ($(and $(WITHOUT_RELEASED),$(RELEASED_SCRIPTS)),)
REGRESS := $(filter-out upgrade,$(REGRESS))
endif
REGRESS_OPTS = --temp-config=test/preload.conf --temp-instance=tmp_check_regress \
	--load-extension=$(EXTENSION)

# TAP tests (test/t/), PGXS's own runner: `make installcheck` runs them after pg_regress,
# `make prove_installcheck` alone; PROVE_TESTS=test/t/005_durability.pl picks some.
# The longest start first, so that run two at a time (prove -j2) they do not end the run alone.
TAP_TESTS = 1
TAP_LONGEST = $(wildcard test/t/017_*.pl test/t/013_*.pl test/t/020_*.pl test/t/004_*.pl)
# test/t/025_citus.pl needs Citus installed for the major under test (Citus is in no Debian
# suite): the citus suite of scripts/test.sh runs it, PROVE_TESTS=test/t/025_citus.pl here.
TAP_OWN_SUITE = test/t/025_citus.pl
PROVE_TESTS ?= $(TAP_LONGEST) $(filter-out $(TAP_LONGEST) $(TAP_OWN_SUITE),$(wildcard test/t/*.pl))

PG_CONFIG ?= pg_config

# C++17; PostgreSQL's headers are system headers to us (PG15's use `register`). Warnings are
# errors where we build (ERROR_ON_WARNING=1: the test scripts and CI), not where a user's
# newer compiler finds something new.
ifdef ERROR_ON_WARNING
WERROR = -Werror
endif
PG_CXXFLAGS += -std=c++17 -Wall -Wextra $(WERROR) -fno-strict-aliasing
# Export only what the server looks up (PGDLLEXPORT, see src/glue/pg.hpp).
PG_CXXFLAGS += -fvisibility=hidden
# Every include names its layer from src/: "core/clock.hpp", "glue/shmem.hpp".
PG_CPPFLAGS += -I$(srcdir)/src
PG_CPPFLAGS += -isystem $(shell $(PG_CONFIG) --includedir-server)
PG_CPPFLAGS += -DSNOWFLAKE_VERSION='"$(EXTVERSION)"'

SHLIB_LINK += -lstdc++ -lcurl -lcrypto
# The server loads libraries RTLD_GLOBAL: calls inside this one bind to its own functions,
# never to a same-named one of a library loaded before it (ELF linkers; others bind so anyway).
ifneq ($(findstring linux,$(shell $(CXX) -dumpmachine)),)
SHLIB_LINK += -Wl,-Bsymbolic
endif
# The server's bitcode rule drops PG_CXXFLAGS; JIT inlining of this module is not needed.
override with_llvm = no

EXTRA_CLEAN = snowflake_mask_key snowflake_mask_key_check test/unit/unit_tests bench/core_costs test/fuzz/fuzz_core test/fuzz/corpus tmp_check tmp_check_regress

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

snowflake_mask_key: scripts/mask_key.sh
	cp $< $@
	chmod 755 $@

# The key tool's check: a key file read with the server's own parser (core/mask.cpp), so that
# snowflake_mask_key accepts what the server accepts and writes only what it loads; installed
# beside it.
MASK_KEY_CHECK_SRCS = src/tools/mask_key_check.cpp src/core/mask.cpp src/core/ulid_codec.cpp
snowflake_mask_key_check: $(MASK_KEY_CHECK_SRCS) $(wildcard src/core/*.hpp)
	$(CXX) $(CXXFLAGS) -std=c++17 -Wall -Wextra $(WERROR) $(CPPFLAGS) -Isrc -o $@ \
		$(MASK_KEY_CHECK_SRCS) $(PG_LDFLAGS) $(LDFLAGS) -lcrypto
all: snowflake_mask_key_check
install: install-mask-key-check
install-mask-key-check: snowflake_mask_key_check installdirs
	$(INSTALL_PROGRAM) snowflake_mask_key_check '$(DESTDIR)$(bindir)/'
.PHONY: install-mask-key-check

# PGXS knows no header dependencies.
$(OBJS): $(wildcard src/core/*.hpp src/glue/*.hpp)

extension/$(EXTENSION)--$(EXTVERSION).sql: extension/$(EXTENSION).sql
	cp $< $@

# (RELEASED_SCRIPTS, above.) A released script of the current version would replace the one
# the build makes: the version was not raised.
install-released:
ifneq ($(filter test/released/$(EXTENSION)--$(EXTVERSION).sql,$(RELEASED_SCRIPTS)),)
	$(error test/released/$(EXTENSION)--$(EXTVERSION).sql is the current version's: raise default_version in $(EXTENSION).control)
endif
ifneq ($(RELEASED_SCRIPTS),)
	$(INSTALL_DATA) $(RELEASED_SCRIPTS) '$(DESTDIR)$(datadir)/extension/'
endif

.PHONY: install-released

# Unit tests of the PostgreSQL-free core, with a fake clock. Published test vectors (the TypeID
# spec's) are other projects' data, kept beside the repo in ../shared/vectors, not in it:
# SNOWFLAKE_VECTORS names that folder (scripts/common.sh passes it, wherever the build runs).
SNOWFLAKE_VECTORS ?= $(abspath $(srcdir)/../shared/vectors)
# The tests are compiled one object a file (make -j compiles them side by side) and linked with
# the module's own core objects: the core is compiled once, as the server runs it. The arm64
# build (scripts/arm64.sh cross-compiles in a tree of its own, with CXX, CC and PG_CONFIG for
# aarch64) links the same objects, compiled for aarch64, as unit_tests_arm64.
UNIT_TEST_OBJS = $(patsubst %.cpp,%.o,$(wildcard test/unit/*.cpp))
$(UNIT_TEST_OBJS): %.o: %.cpp $(wildcard src/core/*.hpp)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra $(WERROR) -pthread $(CPPFLAGS) -Isrc \
		-DSNOWFLAKE_VECTORS_DIR='"$(SNOWFLAKE_VECTORS)"' -c -o $@ $<
# (the core's objects are rebuilt when a header they include changes, as the tests' are)
$(CORE_OBJS): $(wildcard src/core/*.hpp)
test/unit/unit_tests test/unit/unit_tests_arm64: $(UNIT_TEST_OBJS) $(CORE_OBJS)
	$(CXX) -pthread $(LDFLAGS) -o $@ $^ -lgtest -lgtest_main -lcurl -lcrypto

unitcheck: test/unit/unit_tests
	test/unit/unit_tests

EXTRA_CLEAN += $(UNIT_TEST_OBJS) test/unit/unit_tests_arm64

# What one ID costs inside the core (ChaCha20 kernels, clock readings, the streams' steps), for
# bench/run.sh.
bench/core_costs: bench/core_costs.cpp src/core/chacha.cpp src/core/id128.cpp $(wildcard src/core/*.hpp)
	$(CXX) -std=c++17 -O2 -Wall -Wextra $(WERROR) -Isrc -o $@ \
		bench/core_costs.cpp \
		src/core/chacha.cpp src/core/id128.cpp

# libFuzzer over the ULID, TypeID, ObjectId, KSUID, sno and xid parsers and the decoders, with ASan and UBSan (clang). A short run
# by default; FUZZ_SECONDS=600 for the documented long run.
FUZZ_SECONDS ?= 30
FUZZ_SRCS = src/core/ulid_codec.cpp src/core/foreign_codec.cpp src/core/typeid_codec.cpp \
	src/core/sno_codec.cpp src/core/xid_codec.cpp src/core/ksuid_codec.cpp
test/fuzz/fuzz_core: test/fuzz/fuzz_core.cpp $(FUZZ_SRCS) $(wildcard src/core/*.hpp)
	clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-Isrc -o $@ test/fuzz/fuzz_core.cpp $(FUZZ_SRCS)

fuzzcheck: test/fuzz/fuzz_core
	rm -rf test/fuzz/corpus && mkdir -p test/fuzz/corpus
	test/fuzz/fuzz_core -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
		test/fuzz/corpus test/fuzz/seeds

# The TAP tests alone: each starts its own servers (PostgreSQL::Test::Cluster).
prove_installcheck:
	$(prove_installcheck)

# The C++ style (.clang-format) as clang-format 14, Debian 12's, applies it: scripts/test.sh
# checks it on 15 (other Debian suites carry other clang-format versions, which differ).
CLANG_FORMAT ?= clang-format
FORMAT_FILES = $(sort $(wildcard src/core/*.[ch]pp src/glue/*.[ch]pp src/tools/*.cpp test/unit/*.cpp \
	test/fuzz/*.cpp bench/*.cpp))
formatcheck:
	$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_FILES)
format:
	$(CLANG_FORMAT) -i $(FORMAT_FILES)

.PHONY: unitcheck prove_installcheck fuzzcheck formatcheck format

# The release archive, as PGXN wants it: a zip of the committed files (git archive of HEAD,
# less what .gitattributes marks export-ignore) under one folder snowflake-<version>/,
# checked by test/meta_check.py.
DISTDIR ?= dist
dist:
	@git diff --quiet HEAD -- || echo "note: uncommitted changes are not in the archive"
	mkdir -p $(DISTDIR)
	git archive --format=zip --prefix=$(EXTENSION)-$(EXTVERSION)/ \
		-o $(DISTDIR)/$(EXTENSION)-$(EXTVERSION).zip HEAD
	python3 test/meta_check.py --archive $(DISTDIR)/$(EXTENSION)-$(EXTVERSION).zip

.PHONY: dist
