# tend: build, test, check, bench. `make demo` and `make test` install the
# Debian packages they need first (scripts/deps, silent when all is there).

PREFIX  ?= /usr/local
CC      ?= cc
OPT     ?= -O2 -g
PKGS     = lua5.4 libuv readline libcurl msgpack libnats libh2o openssl
WARN     = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
DEPFLAGS = -MMD -MP
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs libuv readline libcurl msgpack libnats libh2o openssl 2>/dev/null)
# Lua is linked statically from liblua5.4-dev's archive when it is there:
# calls into the API then skip the shared library's PLT and PIC code, about
# 15 % of a message's CPU time (docs/benchmarks.md); -rdynamic keeps the API
# visible to C modules loaded with require.
LUA_A      = $(shell pkg-config --variable=libdir lua5.4 2>/dev/null)/liblua5.4.a
LUA_LIBS   = $(if $(wildcard $(LUA_A)),$(LUA_A) -ldl -rdynamic,$(shell pkg-config --libs lua5.4 2>/dev/null))
ALL_CFLAGS = -std=gnu11 $(OPT) $(WARN) $(PKG_CFLAGS) -iquote src $(CFLAGS)
# build/tend is optimized across its files at the link (a send crosses
# api, runtime and base in 5 calls that inline): about 3 % fewer
# instructions per pingpong message (callgrind, docs/costs.md). The objects
# keep their ordinary code too (fat), for the layer check's nm. LTO= turns
# it off (a quicker link while editing).
LTO     ?= -flto=auto -ffat-lto-objects
LIBS       = $(LUA_LIBS) $(PKG_LIBS) -lwslay -lm

# Four layers, each calling only the ones before it: base < runtime < api < cli
# (scripts/layers.lua checks it; `make lint`).
LAYERS   = base runtime api cli
SRC      = $(foreach l,$(LAYERS),$(shell find src/$(l) -name "*.c" | sort))
HDR      = $(foreach l,$(LAYERS),$(shell find src/$(l) -name "*.h" | sort))
LUA_SRC  = $(shell find lua -name '*.lua' | sort)
CORE_SRC = $(wildcard src/base/*.c)

OBJ      = $(SRC:src/%.c=build/obj/%.o) build/obj/modules.o
ASAN_OBJ = $(SRC:src/%.c=build/asan/%.o) build/asan/modules.o
ASAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

.PHONY: all deps demo test check tsan fuzz soak mutate bench format lint install clean observer-shots \
  timeline-shot docs

all: build/tend

deps:
	@scripts/deps

build/gen/modules.c: scripts/embed-lua $(LUA_SRC)
	@mkdir -p build/gen
	scripts/embed-lua $@ $(LUA_SRC)

build/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) $(ALL_CFLAGS) $(LTO) $(DEPFLAGS) -c $< -o $@

build/obj/modules.o: build/gen/modules.c
	@mkdir -p build/obj
	$(CC) $(ALL_CFLAGS) $(LTO) -c $< -o $@

build/tend: $(OBJ)
	@echo "  LD $@"
	@$(CC) $(ALL_CFLAGS) $(LTO) $(LDFLAGS) -o $@ $(OBJ) $(LIBS)

build/asan/%.o: src/%.c
	@mkdir -p $(dir $@)
	@echo "  CC (asan) $<"
	@$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) $(DEPFLAGS) -c $< -o $@

build/asan/modules.o: build/gen/modules.c
	@mkdir -p build/asan
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -c $< -o $@

build/asan/tend: $(ASAN_OBJ)
	@echo "  LD $@"
	@$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -o $@ $(ASAN_OBJ) $(LIBS)

build/test_core: spec/c/test_core.c $(CORE_SRC) src/base/*.h
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) -o $@ spec/c/test_core.c $(CORE_SRC) $(LIBS)

# The host without the command line: what the thread test links.
LIB_OBJ  = $(filter-out build/obj/cli/%,$(OBJ))
TSAN_OBJ = $(filter-out build/tsan/cli/%,$(SRC:src/%.c=build/tsan/%.o)) build/tsan/modules.o
TSAN_FLAGS = -fsanitize=thread -fno-omit-frame-pointer

build/test_threads: spec/c/test_threads.c $(LIB_OBJ)
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) $(LTO) -o $@ spec/c/test_threads.c $(LIB_OBJ) $(LIBS) -lpthread

build/tsan/%.o: src/%.c
	@mkdir -p $(dir $@)
	@echo "  CC (tsan) $<"
	@$(CC) $(ALL_CFLAGS) $(TSAN_FLAGS) $(DEPFLAGS) -c $< -o $@

build/tsan/modules.o: build/gen/modules.c
	@mkdir -p build/tsan
	$(CC) $(ALL_CFLAGS) $(TSAN_FLAGS) -c $< -o $@

# The whole host under ThreadSanitizer: the schedulers' spec on threads.
TSAN_CLI = $(patsubst src/%.c,build/tsan/%.o,$(filter src/cli/%,$(SRC)))
build/tsan/tend: $(TSAN_OBJ) $(TSAN_CLI)
	@echo "  LD $@"
	@$(CC) $(ALL_CFLAGS) $(TSAN_FLAGS) -o $@ $(TSAN_OBJ) $(TSAN_CLI) $(LIBS)

build/tsan/test_threads: spec/c/test_threads.c $(TSAN_OBJ)
	$(CC) $(ALL_CFLAGS) $(TSAN_FLAGS) -o $@ spec/c/test_threads.c $(TSAN_OBJ) $(LIBS) -lpthread

# The thread test, and the schedulers' spec on threads, under
# ThreadSanitizer: a data race fails them.
tsan: deps
	@$(MAKE) --no-print-directory build/tsan/test_threads build/tsan/tend
	TSAN_OPTIONS=halt_on_error=1 build/tsan/test_threads
	TSAN_OPTIONS=halt_on_error=1 build/tsan/tend --real-time --schedulers 3 test spec/multi

build/test_repl: spec/c/test_repl.c
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) -o $@ spec/c/test_repl.c -lutil

demo: deps
	@$(MAKE) --no-print-directory all
	build/tend examples/pingpong.lua 100000

# Every suite, both tiers of specs (spec/ on the virtual clock,
# spec/realtime/ on the real one) and the examples, in parallel
# (scripts/test; TEST_JOBS at once, default three times the processors).
test: deps
	@$(MAKE) --no-print-directory all build/test_core build/test_repl build/test_threads
	@scripts/test build/tend build/test_core build/test_repl build/test_threads

# Both tiers of specs (spec/, spec/realtime/) under ASan+UBSan, the API
# fuzzer there for 10 s (seed 1 unless FUZZ_SEED is set: CI replays the same
# calls), and both tiers under valgrind (leaks are errors), in parallel
# (scripts/check; TEST_JOBS at once, default twice the processors).
check: deps
	@$(MAKE) --no-print-directory build/asan/tend build/tend build/tsan/test_threads build/tsan/tend
	@scripts/check build/asan/tend build/tend build/tsan/test_threads build/tsan/tend

# The API fuzzer under ASan+UBSan: FUZZ_TIME seconds (60), FUZZ_SEED.
FUZZ_TIME ?= 60
fuzz: deps
	@$(MAKE) --no-print-directory build/asan/tend
	scripts/fuzz build/asan/tend $(FUZZ_TIME)

# Long runs that must not grow: 10^6 restarts, 10^7 messages, 10^6 actors
# spawned and stopped, 10^7 timers, 10^6 asks, 10^6 watches (SOAK_SCALE).
SOAK_SCALE ?= 1
soak: deps
	@$(MAKE) --no-print-directory all
	build/tend --virtual-time scripts/soak.lua $(SOAK_SCALE)

# Mutation testing of the C core: each mutant of scripts/mutants.txt in a
# scratch copy, the specs run against it; prints the score and the
# survivors. Minutes; not run by CI. MUTATE_ARGS="-j 1 watch.c" for some.
mutate: deps
	@scripts/mutate $(MUTATE_ARGS)

# The timeline in headless Chromium: screenshots of a drawn trace and of a
# cut one in build/timeline-shot/, checked to be PNGs of the drawing's size
# (look at them). Installs chromium first (scripts/deps browser).
timeline-shot: deps
	@scripts/deps browser
	@$(MAKE) --no-print-directory all
	@scripts/timeline-shot build/tend

# The observer's three views (replay, live, timeline) in headless
# Chromium, written to docs/observer-*.png (the README shows them).
observer-shots: deps
	@scripts/deps browser
	@$(MAKE) --no-print-directory all
	@scripts/observer-shots build/tend docs

bench: deps
	@$(MAKE) --no-print-directory all
	scripts/bench

format:
	clang-format -i $(SRC) $(HDR) spec/c/*.c

# The layers (no upward include or call, no Lua in base, no file over 700
# lines), the citations (every design section cited exists in
# docs/design.md, no issue cited in a comment, nothing outside the
# repository), then format and cppcheck.
lint: all
	build/tend scripts/layers.lua src build/obj
	build/tend scripts/citations.lua
	scripts/no-globals
	clang-format --dry-run --Werror $(SRC) $(HDR) spec/c/*.c
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	  --inline-suppr --suppress=toomanyconfigs --std=c11 \
	  $(shell pkg-config --cflags lua5.4 libuv 2>/dev/null) -Isrc src spec/c

# The reference (docs/reference.md), the lua-language-server annotations
# (types/tend.lua) and the man page (docs/tend.1), made from lua/tend/doc/
# and the command line's help by scripts/gen-docs.lua; committed, and
# make test fails when they are stale (scripts/docs-check).
docs: all
	build/tend scripts/gen-docs.lua . build/tend

# The binary, its man page, and the annotations a .luarc.json names
# ("workspace.library": ["$(PREFIX)/share/tend/types"]).
install: build/tend
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/tend/types
	install -m 755 build/tend $(DESTDIR)$(PREFIX)/bin/tend
	install -m 644 docs/tend.1 $(DESTDIR)$(PREFIX)/share/man/man1/tend.1
	install -m 644 types/tend.lua $(DESTDIR)$(PREFIX)/share/tend/types/tend.lua

clean:
	rm -rf build

-include $(shell find build/obj build/asan build/tsan -name "*.d" 2>/dev/null)
