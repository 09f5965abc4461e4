# schedkit — one entry point: deps, build, test, asan, bench, demo, clean.
#
# Layout convention (new files are picked up without editing this file):
#   kube/*.c                      -> lib/libkube.a
#   scheduler/*.c, scheduler/*/*.c, plugins/*.c (the in-tree list), plugins/*/*.c -> lib/libsched.a
#                                 (cmd/tests/bench, plugins/sdk and plugins/examples excluded)
#   plugins/sdk/include/          -> the plugin API headers (#include "schedkit/plugin.h")
#   plugins/contrib/<Name>/*.c    -> lib/schedkit/plugins/<name>.so (one module per folder, name in
#                                 lower case; SDK headers only, never in libsched.a), and
#                                 build/contrib/<name>.o (the same objects, hidden symbols made
#                                 local) for plugins/contrib/<Name>/tests/test_*.c to link
#   scheduler/cmd/*.c             -> bin/schedkit-scheduler
#   operator/*.c                  -> lib/libop.a,  operator/cmd/*.c -> bin/schedkit-operator
#   e2e/apiserver/*.c (not main.c)-> lib/libapiserver.a, e2e/apiserver/main.c -> bin/schedkit-apiserver
#   e2e/extender/*.c              -> bin/schedkit-sample-extender (a scheduler extender for e2e, demo, bench)
#   kubectl/cmd/*.c               -> bin/kubectl-schedkit (the kubectl plugin; its code is in libsched.a)
#   <dir>/tests/test_*.c          -> build/tests/<dir>_test_* (cmocka, linked with every lib)
#   <dir>/tests/*.c (other names) -> lib/libtestsupport.a (fakes shared by tests: scripted HTTP peer, ...)
#   <dir>/bench/bench_*.c         -> build/bench/<dir>_bench_*
#   <dir>/bench/*.c (other names) -> lib/libtestsupport.a (code shared by benchmarks: cluster setup, workloads)
#   e2e/tests/*.sh                -> end-to-end suites (TAP-style "ok"/"not ok" lines)
#   <dir>/fuzz/fuzz_*.c           -> build/fuzz/fuzz/<dir>_fuzz_* (libFuzzer, `make fuzz` only),
#                                    seed corpus <dir>/fuzz/corpus/<name>/ (name without "fuzz_")
#
# Other compilers: `make OUT=build/clang CC=clang all` keeps clang's objects apart from gcc's;
# `make test-clang` does that and runs the tests (SKIP_E2E=1: unit tests only).

CC      ?= gcc
OBJCOPY ?= objcopy
OUT     ?= .
BLD     := $(if $(filter .,$(OUT)),build,$(OUT))
OBJ     := $(BLD)/obj
BIN     := $(OUT)/bin
LIB     := $(OUT)/lib
PKGS    := libcurl libcjson yaml-0.1 openssl libwebsockets
DEPS_PKGS := libcurl4-openssl-dev libcjson-dev libyaml-dev libssl-dev libwebsockets-dev \
             libcmocka-dev pkg-config gcc make jq curl ca-certificates clang libclang-rt-14-dev \
             python3-kubernetes umoci chromium

ifdef SAN
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
# FUZZ=1 (set by `make fuzz`, clang only): libraries get coverage hooks, fuzz targets link libFuzzer.
ifdef FUZZ
SAN_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
OPT     ?= -O2 -g
CFLAGS  += $(OPT) -std=c11 -Wall -Wextra -Werror -Wno-format-zero-length -D_GNU_SOURCE -pthread -I. -Iplugins/sdk/include \
           $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(SAN_FLAGS)
LDFLAGS += -pthread $(SAN_FLAGS)
LDLIBS  := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -ldl -lm
TEST_LDLIBS := $(shell pkg-config --libs cmocka 2>/dev/null)

KUBE_SRC  := $(wildcard kube/*.c)
SCHED_SRC := $(wildcard scheduler/*.c) $(wildcard scheduler/*/*.c) $(wildcard plugins/*.c) $(wildcard plugins/*/*.c)
SCHED_SRC := $(filter-out scheduler/cmd/% scheduler/tests/% scheduler/bench/% scheduler/fuzz/% \
               plugins/sdk/% plugins/examples/% plugins/contrib/% plugins/tests/% plugins/bench/% plugins/fuzz/%,$(SCHED_SRC))
# The live web view's files, embedded in libsched.a (docs/explain.md): generated C arrays.
DASH_WEB  := $(sort $(wildcard scheduler/decisions/web/*.html scheduler/decisions/web/*.css scheduler/decisions/web/*.js))
DASH_GEN  := $(BLD)/gen/dashboard_assets.c
OP_SRC    := $(wildcard operator/*.c)
APIS_SRC  := $(filter-out e2e/apiserver/main.c,$(wildcard e2e/apiserver/*.c))
TEST_SRC  := $(wildcard */tests/test_*.c) $(wildcard */*/tests/test_*.c) $(wildcard plugins/contrib/*/tests/test_*.c)
BENCH_SRC := $(wildcard */bench/bench_*.c) $(wildcard */*/bench/bench_*.c)
TSUP_SRC  := $(filter-out $(TEST_SRC) $(BENCH_SRC),$(wildcard */tests/*.c) $(wildcard */*/tests/*.c) \
               $(wildcard */bench/*.c) $(wildcard */*/bench/*.c))

# Contrib plugins (plugins/contrib/<Name>/): each folder is one module, compiled as a module is
# outside the tree (docs/plugins.md, "Build"): the SDK headers and cJSON only, no -I. of the core.
CONTRIB_DIRS := $(patsubst %/,%,$(sort $(dir $(wildcard plugins/contrib/*/*.c))))
lc = $(shell printf '%s' '$(1)' | tr '[:upper:]' '[:lower:]')
contrib_name = $(call lc,$(notdir $(1)))
contrib_objs = $(patsubst %.c,$(BLD)/pic/%.o,$(wildcard $(1)/*.c))
MOD_CFLAGS := $(OPT) -std=c11 -Wall -Wextra -Werror -Wno-format-zero-length -pthread -fPIC -fvisibility=hidden \
              -Iplugins/sdk/include $(shell pkg-config --cflags libcjson 2>/dev/null) $(SAN_FLAGS)
CONTRIB_SOS  := $(foreach d,$(CONTRIB_DIRS),$(LIB)/schedkit/plugins/$(call contrib_name,$(d)).so)

objs = $(patsubst %.c,$(OBJ)/%.o,$(1))

LIBKUBE  := $(LIB)/libkube.a
LIBSCHED := $(LIB)/libsched.a
LIBOP    := $(LIB)/libop.a
LIBAPIS  := $(LIB)/libapiserver.a
LIBTSUP  := $(LIB)/libtestsupport.a
ALL_LIBS := $(LIBOP) $(LIBSCHED) $(LIBAPIS) $(LIBKUBE)

SCHED_CMD := $(wildcard scheduler/cmd/*.c)
OP_CMD    := $(wildcard operator/cmd/*.c)
APIS_CMD  := $(wildcard e2e/apiserver/main.c)
# The sample extender of the e2e suite, demo and benchmark (docs/extenders.md): one program, libkube-free.
SAMPLE_EXT_SRC := $(wildcard e2e/extender/*.c)
KCTL_CMD  := $(wildcard kubectl/cmd/*.c)

BINS := $(if $(SCHED_CMD),$(BIN)/schedkit-scheduler) $(if $(OP_CMD),$(BIN)/schedkit-operator) \
        $(if $(APIS_CMD),$(BIN)/schedkit-apiserver) $(if $(SAMPLE_EXT_SRC),$(BIN)/schedkit-sample-extender) \
        $(if $(KCTL_CMD),$(BIN)/kubectl-schedkit)

TEST_BINS := $(foreach t,$(TEST_SRC),$(BLD)/tests/$(subst /,_,$(patsubst %/tests/,%,$(dir $(t))))_$(notdir $(t:.c=)))
BENCH_BINS := $(foreach t,$(BENCH_SRC),$(BLD)/bench/$(subst /,_,$(patsubst %/bench/,%,$(dir $(t))))_$(notdir $(t:.c=)))
FUZZ_SRC  := $(wildcard */fuzz/fuzz_*.c) $(wildcard */*/fuzz/fuzz_*.c)
fuzz_bin   = $(BLD)/fuzz/$(subst /,_,$(patsubst %/fuzz/,%,$(dir $(1))))_$(notdir $(1:.c=))
FUZZ_BINS := $(foreach t,$(FUZZ_SRC),$(call fuzz_bin,$(t)))
FUZZ_SECONDS ?= 60
FUZZ_OUT  := build/fuzz

.PHONY: all deps build test asan bench demo clean tests benches test-clang fuzz fuzzers image
.DEFAULT_GOAL := all

all: $(ALL_LIBS) $(BINS) $(CONTRIB_SOS) tests
build: all
tests: $(TEST_BINS)
benches: $(BENCH_BINS)

# Installs what the build and the tests need; quick and silent when all is present.
deps:
	@missing=""; for p in $(DEPS_PKGS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root to install:$$missing" >&2; exit 1; fi; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -q $$missing >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q $$missing >/dev/null; }; \
	fi; \
	command -v kubectl >/dev/null || echo "make deps: warning: kubectl not found; kubectl e2e suites will fail" >&2
	@# the web view's browser test (e2e/tests/dashboard_e2e.sh): playwright-core as e2e/dashboard/package-lock.json pins it
	@want=$$(jq -r '.packages["node_modules/playwright-core"].version' e2e/dashboard/package-lock.json); \
	have=$$(jq -r .version e2e/dashboard/node_modules/playwright-core/package.json 2>/dev/null); \
	if [ "$$want" != "$$have" ]; then \
	  command -v npm >/dev/null || { echo "make deps: npm not found (Node.js 20 or later is needed for the browser test)" >&2; exit 1; }; \
	  echo "make deps: npm ci in e2e/dashboard (playwright-core $$want)"; \
	  (cd e2e/dashboard && npm ci --no-progress >/dev/null) || exit 1; \
	fi

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

define archive
	@mkdir -p $(dir $@)
	@rm -f $@
	$(if $^,ar rcs $@ $^,ar rcs $@)
endef

$(LIBKUBE): $(call objs,$(KUBE_SRC)) ; $(archive)
$(LIBSCHED): $(call objs,$(SCHED_SRC) $(DASH_GEN)) ; $(archive)
$(DASH_GEN): $(DASH_WEB) scheduler/decisions/web/embed.sh
	@mkdir -p $(dir $@)
	scheduler/decisions/web/embed.sh $@ $(DASH_WEB)
$(LIBOP): $(call objs,$(OP_SRC)) ; $(archive)
$(LIBAPIS): $(call objs,$(APIS_SRC)) ; $(archive)
$(LIBTSUP): $(call objs,$(TSUP_SRC)) ; $(archive)

# The in-tree plugins are reached through the tables plugins/registry.c builds; modules (.so) reach
# the scheduler only through the host table it hands them (schedkit/host_api.h), so no symbol is exported.
$(BIN)/schedkit-scheduler: $(call objs,$(SCHED_CMD)) $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(call objs,$(SCHED_CMD)) $(LIBOP) $(LIBSCHED) $(LIBKUBE) $(LDLIBS)
$(BIN)/schedkit-operator: $(call objs,$(OP_CMD)) $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(call objs,$(OP_CMD)) $(LIBOP) $(LIBSCHED) $(LIBKUBE) $(LDLIBS)
$(BIN)/kubectl-schedkit: $(call objs,$(KCTL_CMD)) $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(call objs,$(KCTL_CMD)) $(LIBSCHED) $(LIBKUBE) $(LDLIBS)
$(BIN)/schedkit-apiserver: $(call objs,$(APIS_CMD)) $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(call objs,$(APIS_CMD)) $(LIBAPIS) $(LIBKUBE) $(LDLIBS)

$(BIN)/schedkit-sample-extender: $(call objs,$(SAMPLE_EXT_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BLD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(MOD_CFLAGS) -MMD -MP -c $< -o $@

# A contrib module: -Wl,--no-undefined proves it needs nothing of schedkit at link time (the SDK's
# forwarders reach the scheduler through the host table, schedkit/module.h). Under SAN the
# sanitizer runtime is the executable's, so the module leaves those symbols undefined.
# The test object: the module's objects as one, with their hidden symbols (the forwarders, named
# like the core's functions) made local, so a test links it next to libsched.a and reaches the
# plugin through its own sk_module_init, handed the core's host table.
define contrib_rule
$(LIB)/schedkit/plugins/$(call contrib_name,$(1)).so: $(call contrib_objs,$(1))
	@mkdir -p $$(dir $$@)
	$$(CC) -shared -fPIC -fvisibility=hidden $(if $(SAN_FLAGS),,-Wl,--no-undefined) $$(LDFLAGS) -o $$@ $$^ \
	  $$(shell pkg-config --libs libcjson 2>/dev/null)
$(BLD)/contrib/$(call contrib_name,$(1)).o: $(call contrib_objs,$(1))
	@mkdir -p $$(dir $$@)
	$$(CC) -r -nostdlib -o $$@.tmp $$^
	$(OBJCOPY) --localize-hidden $$@.tmp $$@ && rm -f $$@.tmp
endef
$(foreach d,$(CONTRIB_DIRS),$(eval $(call contrib_rule,$(d))))

# A contrib test (plugins/contrib/<Name>/tests/test_*.c) also links its plugin's test object.
contrib_test_obj = $(if $(filter plugins/contrib/%,$(1)),$(BLD)/contrib/$(call lc,$(word 3,$(subst /, ,$(1)))).o)

define test_rule
$(1): $(2) $(call contrib_test_obj,$(2)) $(LIBTSUP) $(ALL_LIBS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) -o $$@ $(2) $(call contrib_test_obj,$(2)) $(LIBTSUP) $(ALL_LIBS) $(LIBTSUP) $(LIBKUBE) \
	  $$(LDFLAGS) $$(TEST_LDLIBS) $$(LDLIBS)
endef
$(foreach t,$(TEST_SRC),$(eval $(call test_rule,$(BLD)/tests/$(subst /,_,$(patsubst %/tests/,%,$(dir $(t))))_$(notdir $(t:.c=)),$(t))))
$(foreach t,$(BENCH_SRC),$(eval $(call test_rule,$(BLD)/bench/$(subst /,_,$(patsubst %/bench/,%,$(dir $(t))))_$(notdir $(t:.c=)),$(t))))

# Fuzz targets exist only in a FUZZ=1 build: the normal build never needs libFuzzer.
ifdef FUZZ
define fuzz_rule
$(1): $(2) $(ALL_LIBS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) -fsanitize=fuzzer -o $$@ $(2) $(ALL_LIBS) $(LIBKUBE) $$(LDFLAGS) -fsanitize=fuzzer $$(LDLIBS)
endef
$(foreach t,$(FUZZ_SRC),$(eval $(call fuzz_rule,$(call fuzz_bin,$(t)),$(t))))
fuzzers: $(FUZZ_BINS)
endif

# The README's test command: unit tests (cmocka) then end-to-end suites; ends with "N passed, N failed".
test: deps
	@$(MAKE) --no-print-directory all benches
	@OUT=$(OUT) e2e/run-tests.sh

asan: deps
	@$(MAKE) --no-print-directory OUT=build/asan SAN=1 OPT="-O1 -g" all benches
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  OUT=build/asan e2e/run-tests.sh

# gcc's `make test` is the reference; this is the same suite built by clang in its own OUT.
test-clang: deps
	@$(MAKE) --no-print-directory OUT=build/clang CC=clang all benches
	@SKIP_E2E=$(SKIP_E2E) OUT=build/clang e2e/run-tests.sh

# Every fuzz target for FUZZ_SECONDS on a temporary copy of its seed corpus (the repo's corpus is
# never written). Prints per target the executions and whether it crashed; crash inputs are kept
# in build/fuzz/artifacts/. Exits non-zero when any target crashed (or did not run). ONLY=<substring>
# runs the targets whose name contains it.
fuzz: deps
	@$(MAKE) --no-print-directory OUT=$(FUZZ_OUT) CC=clang FUZZ=1 OPT="-O1 -g" fuzzers
	@mkdir -p $(FUZZ_OUT)/artifacts; failed=0; \
	for src in $(FUZZ_SRC); do \
	  name=$$(basename $$src .c); name=$${name#fuzz_}; dir=$$(dirname $$src); \
	  case "$$name" in *"$(ONLY)"*) ;; *) continue ;; esac; \
	  bin=$(FUZZ_OUT)/fuzz/$$(echo $${dir%/fuzz} | tr / _)_fuzz_$$name; \
	  tmp=$$(mktemp -d /tmp/schedkit-fuzz.XXXXXX); \
	  [ -d $$dir/corpus/$$name ] && cp -R $$dir/corpus/$$name/. $$tmp/; \
	  log=$(FUZZ_OUT)/$$name.log; \
	  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    timeout $$(( $(FUZZ_SECONDS) + 300 )) $$bin -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -timeout=10 -rss_limit_mb=2048 -artifact_prefix=$(FUZZ_OUT)/artifacts/$$name- $$tmp >$$log 2>&1; rc=$$?; \
	  execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $$log | tail -1); \
	  corpus=$$(ls $$tmp | wc -l); rm -rf $$tmp; \
	  if [ $$rc = 0 ]; then res="no crash"; else res="CRASH (exit $$rc, see $$log)"; failed=$$((failed + 1)); \
	    grep -m1 -E '^(==[0-9]+==ERROR|SUMMARY)|runtime error' $$log | sed 's/^/    /'; fi; \
	  printf '%-22s %12s execs  %5s corpus  %s\n' "$$name" "$${execs:-?}" "$$corpus" "$$res"; \
	done; \
	[ $$failed = 0 ] || { echo "make fuzz: $$failed target(s) crashed"; exit 1; }

bench: deps
	@$(MAKE) --no-print-directory all benches
	@OUT=$(OUT) e2e/run-bench.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@OUT=$(OUT) e2e/demo.sh

# make install [PREFIX=/usr/local] [DESTDIR=]: the plugin SDK (headers and schedkit-plugin.pc, whose
# paths name PREFIX, never DESTDIR, so a staged tree works once copied to PREFIX), the binaries and
# the in-tree .so plugins (docs/plugins.md). Idempotent; no root needed with a DESTDIR or a user PREFIX.
PREFIX  ?= /usr/local
DESTDIR ?=
SDK_DIR     := plugins/sdk/include/schedkit
SDK_HDRS    := $(sort $(wildcard $(SDK_DIR)/*.h))
# The plugins built as modules: the contrib plugins (lib/schedkit/plugins/<name>.so); the in-tree
# ones of plugins/<Name>/ are linked into the scheduler.
SK_MODULES  := $(CONTRIB_SOS)
SK_VERSION   = $(shell sed -n 's/^\#define[[:space:]]*SK_VERSION[[:space:]]*"\([^"]*\)".*/\1/p' $(SDK_DIR)/version.h 2>/dev/null)
INST_INC    := $(DESTDIR)$(PREFIX)/include/schedkit
INST_PC     := $(DESTDIR)$(PREFIX)/lib/pkgconfig
INST_PLUG   := $(DESTDIR)$(PREFIX)/lib/schedkit/plugins

.PHONY: install
install: $(BINS) $(SK_MODULES)
	@test -n "$(SK_VERSION)" || { echo "make install: no SK_VERSION in $(SDK_DIR)/version.h" >&2; exit 1; }
	install -d $(INST_INC) $(INST_PC) $(INST_PLUG) $(DESTDIR)$(PREFIX)/bin
	install -m 0644 $(SDK_HDRS) $(INST_INC)/
	printf '%s\n' 'prefix=$(PREFIX)' 'includedir=$${prefix}/include' 'libdir=$${prefix}/lib' \
	  'plugindir=$${libdir}/schedkit/plugins' '' 'Name: schedkit-plugin' \
	  'Description: Headers for schedkit scheduler plugins built as .so modules' \
	  'Version: $(SK_VERSION)' 'Requires: libcjson' 'Cflags: -I$${includedir}' >$(INST_PC)/schedkit-plugin.pc.tmp
	mv -f $(INST_PC)/schedkit-plugin.pc.tmp $(INST_PC)/schedkit-plugin.pc
	$(if $(BINS),install -m 0755 $(BINS) $(DESTDIR)$(PREFIX)/bin/)
	$(if $(SK_MODULES),install -m 0644 $(SK_MODULES) $(INST_PLUG)/)

# make image: the OCI images of the scheduler and the operator (images/*.Containerfile), built by
# images/build-image.sh with umoci (no container engine or daemon) into build/images/<name>/oci,
# tagged SK_VERSION; reproducible (SOURCE_DATE_EPOCH: the last commit's time). Prints the digests.
.PHONY: image
image: deps $(BINS) $(CONTRIB_SOS)
	@for n in scheduler operator; do \
	  d=$$(SK_BIN=$(BIN) SK_LIB=$(LIB) images/build-image.sh $$n $(BLD)/images) || exit 1; \
	  echo "$$d" >$(BLD)/images/$$n.digest; echo "schedkit-$$n:$(SK_VERSION) $$d ($(BLD)/images/$$n/oci)"; \
	done

# install.yaml: the single-file install, `kubectl kustomize manifests/` checked in (the test
# e2e/tests/manifests_install.sh fails when it differs). Regenerate after editing manifests/ or crds/.
.PHONY: install.yaml
install.yaml:
	kubectl kustomize manifests/ >install.yaml.tmp && mv -f install.yaml.tmp install.yaml

clean:
	rm -rf bin lib build

-include $(shell find build -name '*.d' 2>/dev/null)
