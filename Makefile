# huddle -- the two commands a newcomer needs:
#   make run    install missing packages, build, apply the example team and
#               serve it at http://127.0.0.1:7340 (PORT=N for another port;
#               Ctrl-C stops it)
#   make test   install missing packages (Chromium and Node.js too, for the
#               browser tests), then every test, twice: a normal build and
#               an ASan+UBSan build
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

.PHONY: all deps deps-e2e build build-asan build-tsan build-release run test test-tsan test-unit bench fuzz clean format

all: build

deps:
	@scripts/deps.sh

# The browser tests' packages (pinned in tests/e2e/package-lock.json):
# `npm ci` again whenever node_modules is missing or the lockfile changed.
deps-e2e:
	@scripts/deps.sh --e2e
	@if [ ! -d $(E2E_DIR)/node_modules ] || [ ! -f $(NPM_STAMP) ] || \
	    [ $(E2E_DIR)/package-lock.json -nt $(NPM_STAMP) ]; then \
		echo "npm ci in $(E2E_DIR)"; \
		(cd $(E2E_DIR) && npm ci --no-audit --no-fund --loglevel=error) && \
		mkdir -p $(BUILD) && touch $(NPM_STAMP); \
	fi

build:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
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

test-tsan: deps-e2e build-tsan
	@cd $(TSAN_BUILD) && TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp" \
	    ctest --output-on-failure -j $(JOBS) -E dashboard

run: deps build
	@scripts/run.sh $(BUILD) $(RUN_HOME) $(PORT)

test: deps-e2e
	@scripts/checksrc.sh
	@$(MAKE) --no-print-directory build
	@$(MAKE) --no-print-directory build-asan
	@echo "== tests: normal build =="
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@echo "== tests: ASan+UBSan build =="
	@cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

# Phony on purpose: without a rule, `make build-release` found the
# directory and reported nothing to do, leaving a stale binary to measure.
build-release:
	@cmake -S . -B $(BUILD)-release -DCMAKE_BUILD_TYPE=Release -DHUDDLE_TESTS=OFF >/dev/null
	@cmake --build $(BUILD)-release -j $(JOBS) -- --no-print-directory

bench: deps-e2e build-release
	@bench/run.sh $(BUILD)-release

fuzz: deps
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DHUDDLE_FUZZ=ON -DHUDDLE_TESTS=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD) $(BUILD)-release
