# huddle -- the two commands a newcomer needs:
#   make run    install what building and running needs (no test or fuzz
#               packages), build, apply the example team and serve it at
#               http://127.0.0.1:7340 (PORT=N for another port; Ctrl-C
#               stops it)
#   make test   install the tests' packages too (cmocka, Chromium and
#               Node.js for the browser tests, PostgreSQL, ...), then every
#               test, twice: a normal build and an ASan+UBSan build; the
#               PostgreSQL set among them (unit-pg/*, on a throwaway
#               cluster under each build directory, tests/pg/cluster.sh;
#               e2e-pg/* too, in the normal build only)
#   make test-pg  that PostgreSQL set alone, in both builds
#   make install  what make run builds, installed under $(PREFIX)
#               (default PREFIX=~/.local; PREFIX=/usr/local as root;
#               DESTDIR=dir stages it there): bin/huddle, its man page
#               and completions, the example teams and the systemd user
#               unit (cmake/install.cmake); a build directory already
#               configured ($(BUILD), e.g. by make build) is installed as
#               it is; make build-run builds it without installing
#   make uninstall  removes what the last make install installed
#   make package  $(BUILD)/huddle_<version>_<arch>.deb (CPack), for
#               apt-get install ./build/huddle_*.deb
# Also: make (build), make bench, make build-release (the benchmarks'
# build, without running them), make fuzz, make clean.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
RUN_HOME   ?= $(BUILD)/home
PORT       ?= 7340
E2E_DIR    := tests/e2e
NPM_STAMP  := $(BUILD)/.e2e-npm-ci.stamp
FUZZ_SECONDS ?= 30
PREFIX     ?= $(HOME)/.local
DESTDIR    ?=

.PHONY: all deps deps-test deps-fuzz build build-asan build-tsan build-release build-run run install uninstall package test test-pg test-tsan test-unit bench fuzz clean format

all: build

# scripts/deps.sh installs per purpose: run, test or fuzz.
deps:
	@scripts/deps.sh run

# The tests' packages, then the browser tests' (pinned in
# tests/e2e/package-lock.json): `npm ci` again whenever node_modules is
# missing or the lockfile changed.
deps-test:
	@scripts/deps.sh test
	@if [ ! -d $(E2E_DIR)/node_modules ] || [ ! -f $(NPM_STAMP) ] || \
	    [ $(E2E_DIR)/package-lock.json -nt $(NPM_STAMP) ]; then \
		echo "npm ci in $(E2E_DIR)"; \
		(cd $(E2E_DIR) && npm ci --no-audit --no-fund --loglevel=error) && \
		mkdir -p $(BUILD) && touch $(NPM_STAMP); \
	fi

# Tests on, always: a tree `make run` configured without them (no cmocka)
# gets them back here.
build:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHUDDLE_TESTS=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

build-asan:
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DHUDDLE_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS) -- --no-print-directory

# ThreadSanitizer, on demand (not part of make test): every test but the
# browser one, which would mostly measure Chromium under TSan.
TSAN_BUILD ?= build-tsan
build-tsan:
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS) -- --no-print-directory

test-tsan: deps-test build-tsan
	@cd $(TSAN_BUILD) && TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp" \
	    ctest --output-on-failure -j $(JOBS) -E dashboard

# Running needs no test packages: without cmocka the tests are left out of
# the build (make build and make test put them back).
build-run: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DHUDDLE_TESTS=$$(pkg-config --exists cmocka && echo ON || echo OFF) \
	    $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

run: build-run
	@scripts/run.sh $(BUILD) $(RUN_HOME) $(PORT)

# huddle on PATH: $(PREFIX)/bin/huddle, saying so when that directory is
# not on PATH yet. A configured $(BUILD) is built and installed as it is
# configured (no packages, no reconfiguring: the tests install from their
# own build directory); else build-run configures one.
HD_CONFIGURED := $(wildcard $(BUILD)/CMakeCache.txt)
install: $(if $(HD_CONFIGURED),,build-run)
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory >/dev/null
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix $(PREFIX) >/dev/null
	@sed 's|^|$(DESTDIR)|' $(BUILD)/install_manifest.txt >$(BUILD)/installed-files.txt
	@echo "installed $(DESTDIR)$(PREFIX)/bin/huddle"
	@[ -n "$(DESTDIR)" ] || case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; \
	*) echo "$(PREFIX)/bin is not on your PATH: export PATH=\"$(PREFIX)/bin:\$$PATH\"" ;; esac

# What make install installed, as it kept the list (DESTDIR included):
# not install_manifest.txt, which make package rewrites with its own.
uninstall:
	@cmake -DMANIFEST=$(BUILD)/installed-files.txt -P cmake/uninstall.cmake

# The .deb: its Depends come from dpkg-shlibdeps (dpkg-dev, a test
# package of scripts/deps.sh).
package: $(if $(HD_CONFIGURED),,build-run)
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory >/dev/null
	@cd $(BUILD) && cpack -G DEB >/dev/null
	@ls $(BUILD)/huddle_*.deb

# ctest in build directory $(1), with ctest's arguments $(2). The
# PostgreSQL set's cluster ($(1)/pg) is stopped by its fixture's pg/stop,
# which ctest runs even when tests failed; stopped here again whatever
# ended ctest (Ctrl-C included), as pg_ctl runs the server in a session
# of its own that no signal to ctest reaches. Nothing to stop is no error.
define hd_ctest
trap '$(CURDIR)/tests/pg/cluster.sh stop $(abspath $(1))/pg >/dev/null' EXIT; \
	trap 'exit 130' INT; trap 'exit 143' TERM; \
	cd $(1) && ctest --output-on-failure -j $(JOBS) $(2)
endef

test: deps-test
	@scripts/checksrc.sh
	@$(MAKE) --no-print-directory build
	@$(MAKE) --no-print-directory build-asan
	@echo "== tests: normal build =="
	@$(call hd_ctest,$(BUILD))
	@echo "== tests: ASan+UBSan build =="
	@$(call hd_ctest,$(ASAN_BUILD))

# The PostgreSQL set alone (ctest label pg: pg/start, the unit-pg tests,
# e2e/pg-cluster, the e2e-pg tests (normal build only), pg/stop), in both
# builds: deps-test, as the e2e-pg tests that drive the MCP SDK, the
# Inspector or the agent CLIs need tests/e2e/node_modules.
test-pg: deps-test
	@$(MAKE) --no-print-directory build
	@$(MAKE) --no-print-directory build-asan
	@echo "== PostgreSQL tests: normal build =="
	@$(call hd_ctest,$(BUILD),-L '^pg$$')
	@echo "== PostgreSQL tests: ASan+UBSan build =="
	@$(call hd_ctest,$(ASAN_BUILD),-L '^pg$$')

# Phony on purpose: without a rule, `make build-release` found the
# directory and reported nothing to do, leaving a stale binary to measure.
build-release:
	@cmake -S . -B $(BUILD)-release -DCMAKE_BUILD_TYPE=Release -DHUDDLE_TESTS=OFF >/dev/null
	@cmake --build $(BUILD)-release -j $(JOBS) -- --no-print-directory

bench: deps-test build-release
	@bench/run.sh $(BUILD)-release

fuzz: deps-fuzz
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DHUDDLE_FUZZ=ON -DHUDDLE_TESTS=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

deps-fuzz:
	@scripts/deps.sh fuzz

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD) $(BUILD)-release
