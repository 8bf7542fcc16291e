# Grow: build, run the demo, test.  `make help` lists the targets.
#
# `make run` and `make test` work on a fresh Debian 12 machine: they install missing packages
# first (scripts/install-deps) and start a private headless desktop when there is no desktop
# session (scripts/with-desktop).

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build

# The Swift toolchain lives in /opt/swift on our images; use it even when the caller's PATH
# lacks it (e.g. CI's login-less shell), but don't shadow a swift the caller chose.
SWIFT_BIN := /opt/swift/usr/bin
ifneq ($(wildcard $(SWIFT_BIN)/swift),)
ifeq ($(filter $(SWIFT_BIN),$(subst :, ,$(PATH))),)
export PATH := $(SWIFT_BIN):$(PATH)
endif
endif

SWIFT ?= swift
GROW := .build/debug/grow
# The Swift source directories (those that exist).
FORMAT_DIRS := $(wildcard Sources Plugins Tools Tests examples)

# make install: where to (GNU conventions; DESTDIR is a staging root, never written into
# files) and which build to install. NO_BUILD=1 installs what is already built (`make release`
# as yourself, then `sudo make install NO_BUILD=1`, so root never writes into .build): the
# tests stage the debug build that way, because `swift test` holds the build directory's lock.
PREFIX ?= /usr/local
DESTDIR ?=
CONFIGURATION ?= release
NO_BUILD ?=

# make soak: how many faults, the whole run's bound in seconds, and the seed (empty: a new one,
# printed, so a failing run can be repeated with SOAK_SEED=...). The stress and trust faults
# last seconds each (a stopped dunst up to 30; some restart the daemon twice): a
# run takes 25-35 minutes, hence a 45-minute bound.
SOAK_FAULTS ?= 500
SOAK_TIME_LIMIT ?= 2700
SOAK_SEED ?=
# More grow-soak options, e.g. SOAK_ARGS="--kinds classic --hang-rounds 0 --json" (see
# grow-soak --help).
SOAK_ARGS ?=

.PHONY: help deps build release run test test-unit soak bench bench-deps fuzz sanitize asan tsan format lint clean \
  install uninstall api deb deb-check

# List the targets.
help:
	@echo "make build   - debug build of the product: grow, the plugins, the SDK (not Tools/)"
	@echo "make release - release build of the same: what 'make install NO_BUILD=1' installs"
	@echo "make run     - install deps, build, run 'grow demo' (private desktop if none)"
	@echo "make test    - install deps, build, run the whole suite on a private desktop, per tier"
	@echo "make test-unit - the unit tier alone (no bus, daemon or desktop): seconds"
	@echo "make soak    - fault-injection soak: kill -9, crashes, stalled peers, full disk; prints a table"
	@echo "make bench   - benchmarks: print performance figures (release build)"
	@echo "make fuzz    - libFuzzer on the config, duration and plugin-line parsers (FUZZ_SECONDS each)"
	@echo "make sanitize - the test suite under AddressSanitizer, then ThreadSanitizer (make asan, make tsan)"
	@echo "make format  - swift format, in place"
	@echo "make lint    - swift format lint --strict"
	@echo "make api     - rewrite api/GrowKit.api.txt, the SDK's promised API, from the built interfaces"
	@echo "make clean   - remove build output (also the fuzz and sanitizer builds)"
	@echo "make install - build (release) and install into \$$DESTDIR\$$PREFIX (default /usr/local)"
	@echo "make uninstall - remove exactly what make install installed there"
	@echo "make deb    - build grow_VERSION_ARCH.deb (debian/, release build) into \$$DEB_DIR"
	@echo "make deb-check - make deb, then lintian, appstreamcli and desktop-file-validate on it"

# Install the Debian packages that are missing and check that swift is available.
deps:
	scripts/install-deps

# The product: the grow executable, the built-in plugins and the plugin test kit make install
# ships with the SDK. Not the tools in Tools/ (make bench, soak and fuzz build those) nor the
# test fixtures (Tests/Fixtures, a package of its own).
# GrowPluginTesting is a target: SwiftPM builds everything for `--product` of an automatic
# library product.
# The built-in plugins' ids, from their one list in Package.swift.
BUILT_IN_PLUGINS := $(shell scripts/built-in-plugins)
# grow is the static front, grow-cli the whole command line it execs (InstallLayout).
PRODUCTS := grow grow-cli $(addprefix grow-plugin-,$(BUILT_IN_PLUGINS))
# $(call build_product,CONFIGURATION)
build_product = for product in $(PRODUCTS); do \
	  $(SWIFT) build -c $(1) --product $$product || exit 1; done; \
	  $(SWIFT) build -c $(1) --target GrowPluginTesting; \
	  $(DAEMON_IMAGE) $(1) >/dev/null
# The static daemon image, grow-daemon, beside grow (a scratch path of its own: the kit linked
# in, not shared); `grow daemon` runs it when no plugin library is enabled.
DAEMON_IMAGE := scripts/build-daemon-image

# Debug build of the product.
build:
	$(call build_product,debug)

# Release build of the product, as yourself before `sudo make install NO_BUILD=1`. A plain
# `swift build -c release` is not enough: it leaves out the plugin test kit the SDK ships.
release:
	$(call build_product,release)

# A short, visible focus -> break cycle. Uses the current desktop when DISPLAY and the session
# bus work; otherwise a private headless one that is torn down afterwards.
run: deps build
	@scripts/with-desktop $(GROW) demo || { \
	  status=$$?; \
	  echo "make run: '$(GROW) demo' failed with status $$status." >&2; \
	  echo "make run: if grow reports an unknown command, 'grow demo' is not implemented yet." >&2; \
	  exit $$status; }

# The whole suite (Swift Testing only), tier by tier (scripts/test-tiers: unit, then system),
# always on a private desktop and session bus so tests never see the user's notifications or
# services. Building first, the test fixtures too, keeps compile time out of the desktop's
# lifetime and every swift build but the SDK's own checks out of swift test. Prints each
# tier's tests and seconds; make fails with the first failing tier's status.
test: deps deb-check
	$(SWIFT) build --build-tests
	$(DAEMON_IMAGE) debug >/dev/null
	GROW_TEST_FIXTURES=$$(scripts/build-test-fixtures) && export GROW_TEST_FIXTURES && \
	  GROW_TEST_DEB=$$(scripts/build-deb $(DEB_DIR)) && export GROW_TEST_DEB && \
	  scripts/with-desktop --private scripts/test-tiers all

# The unit tier alone (no bus, no daemon, no desktop): the quick check while editing.
test-unit: deps
	$(SWIFT) build --build-tests
	scripts/test-tiers unit

# The fault-injection soak (docs/measurements.md, "Nothing lost"):
# SOAK_FAULTS faults (pause, skip, stop, daemon kill -9, plugin and dunst crashes; dunst and
# the X server stopped, a title flood, the history locked, the data directory full, the WAL
# deleted; hostile sway and Hyprland peers, reload storms, a plugin crashing in
# init, a damaged pending journal, call bursts) against the real daemon on a private
# desktop, then three plugin-hang rounds, then a table of faults, recoveries, GetStatus
# latency per kind of fault, the daemon's memory and descriptors, phases recorded vs.
# expected, integrity check and DND. Fails when an invariant broke;
# `timeout` is the hard stop should the soak itself hang. Run as root: the data directory's
# full-disk fault mounts a tmpfs (grow-soak unmounts it at the end).
soak: deps build
	$(SWIFT) build --product grow-soak
	timeout --kill-after=10 $$(( $(SOAK_TIME_LIMIT) + 60 )) scripts/with-desktop --private \
	  .build/debug/grow-soak --faults $(SOAK_FAULTS) --time-limit $(SOAK_TIME_LIMIT) \
	  $(if $(SOAK_SEED),--seed $(SOAK_SEED)) $(SOAK_ARGS)

# Performance figures (release build): event bus throughput, the wake-ups of the daemon and
# of `grow status --follow` (which runs the release `grow` next to grow-bench), Grow side by
# side with Safe Eyes, Workrave and GNOME Pomodoro (compare), and the lean goals (memory,
# wake-ups, start-up) in one table with those anchors and the floors (lean), each newer
# plugin's own cost (plugins) and the daemon's cost per GetStatus (getstatus). Prints, asserts
# nothing.
bench: deps bench-deps
	$(SWIFT) build -c release --product grow
	$(SWIFT) build -c release --product grow-cli  # the front execs it for all but `grow status`
	$(SWIFT) build -c release --product grow-bench
	$(SWIFT) build -c release --product grow  # grow-bench times `grow stats --year` as a process
	# compare runs `grow daemon` with the built-in plugins, found next to `grow`
	for plugin in $(BUILT_IN_PLUGINS); do \
	  $(SWIFT) build -c release --product grow-plugin-$$plugin || exit 1; \
	done
	$(DAEMON_IMAGE) release >/dev/null
	# The floors the lean section measures Grow against (bench/floors).
	mkdir -p .build/bench-floors
	swiftc -O bench/floors/GlibcOnly.swift -o .build/bench-floors/glibc-only
	$(CC) -O2 -o .build/bench-floors/tick bench/floors/tick.c
	# `grow status`'s floor: the same GetStatus from Swift with libdbus and Glibc only, the
	# stdlib static (a prototype of a lean status path).
	swiftc -O -static-stdlib -I Sources/GrowKit/CDBus $$(pkg-config --cflags-only-I dbus-1 | sed 's/-I/-Xcc -I/g') \
	  bench/floors/StatusFloor.swift -o .build/bench-floors/status-floor
	.build/release/grow-bench

# The tools `grow-bench compare` measures next to Grow; apt-get runs only when one is missing.
bench-deps:
	scripts/install-deps --bench

# Coverage-guided fuzzing: libFuzzer with AddressSanitizer on the config parser, the duration
# parser and the external-plugin line protocol, FUZZ_SECONDS each, from the seeds in
# Tests/FuzzCorpus. Builds in .build-fuzz; prints runs, coverage and crashes; fails on a crash.
# FUZZ_TARGETS picks targets (config duration plugin-line). `make test` runs the same checks
# on seeded random inputs (Tests/GrowFuzzTests); this goes further.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz $(FUZZ_TARGETS)

# The whole suite once under AddressSanitizer and once under ThreadSanitizer, one after the
# other, never in parallel (each is a full instrumented build: .build-asan, .build-tsan), the
# second also when the first fails. Not part of `make test`. Prints tests run and failed and
# the sanitizer reports; fails on any of them.
sanitize: deps
	status=0; \
	  scripts/sanitize address --skip '$(SANITIZE_SKIP)' || status=1; \
	  scripts/sanitize thread --skip '$(SANITIZE_SKIP)' || status=1; \
	  exit $$status

# Tests to leave out under a sanitizer (a `swift test --skip` regex); none now. The command
# flood test (aPluginThatStopsReadingIsCutOffWhileTheDaemonAnswers) was left out while an
# instrumented daemon fell behind it; since a plugin's output is read one chunk per loop turn
# it passes under both sanitizers. `^$` matches no test name.
SANITIZE_SKIP ?= ^$$

asan: deps
	scripts/sanitize address --skip '$(SANITIZE_SKIP)'

tsan: deps
	scripts/sanitize thread --skip '$(SANITIZE_SKIP)'

# Rewrite the sources with the project style (.swift-format).
format:
	$(SWIFT) format format --in-place --recursive $(FORMAT_DIRS)

# Check the style without changing files; fails on any finding.
lint:
	$(SWIFT) format lint --strict --recursive $(FORMAT_DIRS)

# The SDK's API listing: every public declaration of GrowKit's modules and the plugin test kit,
# from the module interfaces the build emits (what `make install` ships to plugin authors).
# GrowPluginKitTests fails while the build and api/GrowKit.api.txt differ; run this when the
# change to the promise is meant, and commit the file (see docs/writing-plugins.md, "The ABI
# promise").
api:
	$(SWIFT) build --target GrowPluginTesting
	$(SWIFT) build --product grow-api
	mkdir -p api
	.build/debug/grow-api .build/debug/Modules > api/GrowKit.api.txt.new
	mv api/GrowKit.api.txt.new api/GrowKit.api.txt
	@echo "api/GrowKit.api.txt: $$(wc -l < api/GrowKit.api.txt) declarations"

# Remove build output (SwiftPM's .build, including the local GrowKit package's, and the fuzz
# and sanitizer builds).
clean:
	rm -rf .build .build-fuzz .build-asan .build-tsan Sources/GrowKit/.build

# The grow binary, libGrowKit.so with the Swift runtime, the plugins, man pages, completions,
# a desktop entry, a systemd user unit and a D-Bus activation file; see scripts/install-grow.
# Builds first (as the caller: run `make` before `sudo make install` to build as yourself).
install:
	@[[ "$(PREFIX)" == /* ]] || { echo "make install: PREFIX must be absolute" >&2; exit 2; }
	$(if $(NO_BUILD),,$(call build_product,$(CONFIGURATION)))
	BUILD_COMMAND="make $(if $(filter debug,$(CONFIGURATION)),build,release)" \
	  scripts/install-grow install .build/$(CONFIGURATION) "$(PREFIX)" "$(DESTDIR)"

# Removes what the manifest of `make install` (PREFIX/lib/grow/install-manifest) lists.
uninstall:
	scripts/install-grow uninstall "$(PREFIX)" "$(DESTDIR)"

# The Debian package (debian/, debhelper): the release build and make install with
# PREFIX=/usr, the Swift runtime in /usr/lib/grow. Built once per commit (scripts/build-deb).
DEB_DIR ?= .build/deb
deb: deps
	scripts/build-deb $(DEB_DIR)

# lintian, appstreamcli and desktop-file-validate on the package (scripts/check-deb); make test
# runs it, and its tests install the package for real (DebianPackageTests).
deb-check: deb
	scripts/check-deb "$$(scripts/build-deb $(DEB_DIR))"
