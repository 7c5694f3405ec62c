# xdpban build. `make` builds everything, `make test` installs what is missing, builds and runs
# every test, `make test-kernels` checks the programs on Debian 12's 6.1 in a VM (make test does
# too), `make demo` runs the main job, `make bench` measures, `make fuzz` fuzzes the parsers and
# file readers (FUZZ_TIME seconds each). Quiet unless V=1.
.DELETE_ON_ERROR:
.SUFFIXES:
.SECONDARY:

# The version of xdpban: the programs' --version, the library's pkg-config file. Only here.
VERSION   := 1.0.0
BUILD     ?= build
CLANG     ?= clang
CC        ?= gcc
BPFTOOL   ?= bpftool
ARCH      := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
PREFIX    ?= /usr/local
DESTDIR   ?=

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	      -Iinclude -I/usr/include/$(MULTIARCH)
CFLAGS     ?= -g -O2
CFLAGS     += -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -Werror=unused-function \
	      -Iinclude -I$(BUILD) -Itests/harness -Iuser/lib -Iuser/common -D_GNU_SOURCE \
	      -DXDPBAN_VERSION='"$(VERSION)"' $(SANITIZE)
# SANITIZE: extra compile and link flags, set by `make asan` for its build of the unit tests.
SANITIZE  ?=
LDLIBS     := -lbpf -lxdp -lelf -lz

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))
SKELS     := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
BPF_HDRS  := $(wildcard bpf/*.h) $(wildcard include/*.h)

# Two libraries, one above the other: user/lib/*.c is the application library (libxdpban,
# below), user/common/*.c what the programs share beyond it (the config, list files and
# runtime lists, the control protocol, the state file, the fleet's entries), an archive that
# calls user/lib and nothing else. Every other directory user/PROG/ holds the sources of one
# program, built as $(BUILD)/PROG; the tests, fuzzers and benches link the two libraries and no
# program's sources (`make layers` checks it, tests/tools/layers.py).
ULIB_SRCS := $(wildcard user/lib/*.c)
ULIB_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(ULIB_SRCS))
UCOMMON_SRCS := $(wildcard user/common/*.c)
UCOMMON_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(UCOMMON_SRCS))
UCOMMON   := $(BUILD)/common/libxbcommon.a
UPROG_DIRS:= $(sort $(filter-out user/lib user/common,$(patsubst %/,%,$(dir $(wildcard user/*/*.c)))))
UPROGS    := $(sort $(patsubst user/%,$(BUILD)/%,$(UPROG_DIRS)))
U_HDRS    := $(wildcard user/*/*.h)

HARNESS_SRCS := $(wildcard tests/harness/*.c)
HARNESS_OBJS := $(patsubst tests/harness/%.c,$(BUILD)/harness/%.o,$(HARNESS_SRCS))
HARNESS_HDRS := $(wildcard tests/harness/*.h)
# The cmocka tests by kind: tests/unit/ need nothing but memory, tests/kernel/ load the data
# path into the running kernel (unpinned, through the harness) and skip without root. Both
# build into $(BUILD)/tests/; the shell tests of whole programs are tests/e2e/.
TEST_SRCS := $(wildcard tests/unit/test_*.c tests/kernel/test_*.c)
TESTS     := $(patsubst %.c,$(BUILD)/tests/%,$(notdir $(TEST_SRCS)))

BENCH_SRCS := $(wildcard bench/*.c)
BENCHES   := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))
BENCH_HDRS := $(wildcard bench/*.h bench/bpf/*.h)
# The pipeline linked statically, for the VM of bench/profile.sh (instructions per packet):
# the libraries' modules from archives, as kcheck.static below.
BENCH_STATIC := $(BUILD)/bench/pipeline.static
BENCH_BPF_OBJS := $(patsubst bench/bpf/%.bpf.c,$(BUILD)/bench/bpf/%.bpf.o,$(wildcard bench/bpf/*.bpf.c))
# The data path cut after each stage, for the bench's breakdown (bpf/xdpban.bpf.c).
BENCH_CUT_OBJS := $(foreach c,1 2 3 4 5 6,$(BUILD)/bench/bpf/xdpban_cut$(c).bpf.o)

# Fleet sharing talks to Redis with hiredis (Debian's libhiredis-dev) and signs its entries
# with OpenSSL's HMAC (libssl-dev): the common library's fleet entries need the latter.
FLEET_LIBS := $(shell pkg-config --libs hiredis 2>/dev/null || echo -lhiredis) \
	$(shell pkg-config --libs libcrypto 2>/dev/null || echo -lcrypto)
# The daemon's log sends its lines to the journal with libsystemd (libsystemd-dev).
LOG_LIBS := $(shell pkg-config --libs libsystemd 2>/dev/null || echo -lsystemd)
USER_LIBS := -Wl,--as-needed $(LDLIBS) $(shell pkg-config --libs inih json-c libmicrohttpd 2>/dev/null) \
	     $(FLEET_LIBS) $(LOG_LIBS)
# Every link writes a map beside its output: what went in, for `make layers`.
LINK_MAP   = -Wl,-Map=$@.map

# The kernel check (tests/kernel/kcheck.c): loads every program of this build's skeleton as
# xdpband does and holds each to a budget of processed instructions (tests/e2e/e2e_verifier.sh),
# with the harness's loader and packets for its verdict rows. kcheck.static is the same linked
# statically, for the initramfs of the VMs of tests/e2e/e2e_kernels.sh (`make test-kernels`): the
# library's modules go into an archive so that only those it calls are linked, then Debian's
# static libbpf, libxdp (its dispatcher embedded), libelf, zlib and zstd.
KCHECK      := $(BUILD)/kernel/kcheck $(BUILD)/kernel/kcheck.static
KCHECK_OBJS := $(BUILD)/kernel/kcheck.o $(BUILD)/harness/dp.o $(BUILD)/harness/pkt.o
KCHECK_STATIC_LIBS := -l:libxdp.a -l:libbpf.a -l:libelf.a -l:libz.a -l:libzstd.a

# AddressSanitizer and UBSan, with UB fatal (no recovery): the fuzz harnesses and `make asan`.
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# Each tests/fuzz/fuzz_NAME.c is a libFuzzer harness (tests/fuzz/README.md), built by clang
# into $(BUILD)/fuzz/fuzz_NAME with the two libraries, all with the sanitizers and coverage
# for the fuzzer.
FUZZ_TIME ?= 60
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
FUZZ_OBJS := $(patsubst user/%.c,$(BUILD)/fuzz/obj/%.o,$(ULIB_SRCS) $(UCOMMON_SRCS)) \
	     $(BUILD)/fuzz/obj/support.o
FUZZ_CFLAGS = $(CFLAGS) -O1 $(SAN_FLAGS) -Itests/fuzz

# The application library (include/xdpban.h, deploy/libxdpban.3): every module of user/lib,
# built position-independent with hidden visibility so that only the XDPBAN_API functions are
# exported (nm -D). The archive is the same objects linked into one, with every hidden symbol
# made local, so that no internal xb_ name can clash with an application's.
LIBAPI_SONAME := libxdpban.so.1
LIBAPI_OBJS := $(patsubst user/%.c,$(BUILD)/pic/%.o,$(ULIB_SRCS))
LIBAPI    := $(BUILD)/lib/$(LIBAPI_SONAME) $(BUILD)/lib/libxdpban.so $(BUILD)/lib/libxdpban.a

.PHONY: all deps deps-demo check-deps test test-kernels demo bench bench-full install install-lib clean \
	fuzz fuzz-build asan asan-tests layers installable uninstall uninstall-lib deb
all: $(BPF_OBJS) $(SKELS) $(UPROGS) $(LIBAPI) $(TESTS) $(KCHECK) $(BENCHES) $(BENCH_STATIC) \
     $(BENCH_BPF_OBJS) \
     $(BENCH_CUT_OBJS) fuzz-build asan

deps:
	$(Q)./tests/deps.sh

# Only what building the programs and running the demo need (tests/deps.sh).
deps-demo:
	$(Q)./tests/deps.sh demo

# What the build takes from the machine, checked before anything is compiled, so that a fresh
# machine hears in one line which tool or header is missing and that `make deps` installs it,
# not a compiler's error about a header. BUILD_HEADERS: the libraries' headers the sources
# include (libelf, zlib and zstd are linked only: their headers stand for their -dev packages);
# TEST_HEADERS those of the tests alone, not checked for a build of the programs only
# (PROGRAMS_ONLY=1, as `make demo` builds).
BUILD_TOOLS   := $(CLANG) $(BPFTOOL) $(firstword $(CC)) pkg-config
BUILD_HEADERS := bpf/libbpf.h xdp/libxdp.h gelf.h zlib.h zstd.h ini.h json-c/json.h microhttpd.h \
		 hiredis/hiredis.h openssl/hmac.h systemd/sd-journal.h
TEST_HEADERS  := cmocka.h
PROGRAMS_ONLY ?=
check-deps:
	$(Q)missing=; \
	for t in $(BUILD_TOOLS); do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if command -v $(firstword $(CC)) >/dev/null 2>&1; then \
		for h in $(BUILD_HEADERS) $(if $(PROGRAMS_ONLY),,$(TEST_HEADERS)); do \
			printf '#include <stdarg.h>\n#include <stddef.h>\n#include <setjmp.h>\n#include <sys/socket.h>\n#include <%s>\n' \
				"$$h" | $(CC) -E -x c - >/dev/null 2>&1 || missing="$$missing <$$h>"; \
		done; \
	fi; \
	if [ -n "$$missing" ]; then \
		echo "xdpban: missing$$missing: run 'make deps' (as root) to install what the build needs" >&2; \
		exit 1; \
	fi

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .,_,$(*F)) > $@

$(BUILD)/user/%.o: user/%.c $(U_HDRS) $(SKELS) $(wildcard include/*.h) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) -c $< -o $@

$(UCOMMON): $(UCOMMON_OBJS)
	$(call msg,AR,$@)
	$(Q)mkdir -p $(@D) && rm -f $@ && $(AR) rcs $@ $^

define uprog
$(BUILD)/$(1): $(patsubst user/%.c,$(BUILD)/user/%.o,$(wildcard user/$(1)/*.c)) $(UCOMMON) $(ULIB_OBJS)
	$$(call msg,CCLD,$$@)
	$$(Q)$$(CC) $$(CFLAGS) $$^ -o $$@ $$(USER_LIBS) $$(LINK_MAP)
endef
$(foreach d,$(UPROG_DIRS),$(eval $(call uprog,$(notdir $(d)))))
# `xdpban top` draws with curses (Debian's libncurses-dev).
$(BUILD)/xdpban: USER_LIBS += $(shell pkg-config --libs ncurses 2>/dev/null || echo -lncurses)

$(BUILD)/pic/%.o: user/%.c $(U_HDRS) $(SKELS) $(wildcard include/*.h) | $(BUILD)
	$(call msg,CC-PIC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) -fPIC -fvisibility=hidden -ffunction-sections \
		-fdata-sections -c $< -o $@

$(BUILD)/lib/$(LIBAPI_SONAME): $(LIBAPI_OBJS)
	$(call msg,LD-SO,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) -shared -Wl,-soname,$(LIBAPI_SONAME) \
		-Wl,--no-undefined -Wl,--gc-sections $^ -o $@ -lbpf

$(BUILD)/lib/libxdpban.so: $(BUILD)/lib/$(LIBAPI_SONAME)
	$(Q)ln -sf $(LIBAPI_SONAME) $@

$(BUILD)/lib/libxdpban.a: $(LIBAPI_OBJS)
	$(call msg,AR,$@)
	$(Q)mkdir -p $(@D) && $(LD) -r $^ -o $@.o && objcopy --localize-hidden $@.o && \
		rm -f $@ && $(AR) rcs $@ $@.o && rm -f $@.o

$(BUILD)/harness/%.o: tests/harness/%.c $(HARNESS_HDRS) $(U_HDRS) $(SKELS) $(wildcard include/*.h) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) -c $< -o $@

define test_rule
$(BUILD)/tests/%: tests/$(1)/%.c $(HARNESS_OBJS) $(UCOMMON) $(ULIB_OBJS) $(HARNESS_HDRS) $(SKELS) | $(BUILD)
	$$(call msg,CCLD,$$@)
	$$(Q)mkdir -p $$(@D) && $$(CC) $$(CFLAGS) $$< $$(HARNESS_OBJS) $$(UCOMMON) $$(ULIB_OBJS) \
		-o $$@ $$(USER_LIBS) -lcmocka -lm $$(LINK_MAP)
endef
$(foreach k,unit kernel,$(eval $(call test_rule,$(k))))

$(BUILD)/kernel/kcheck.o: tests/kernel/kcheck.c $(HARNESS_HDRS) $(U_HDRS) $(SKELS) \
			  $(wildcard include/*.h) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/kernel/kcheck: $(KCHECK_OBJS) $(ULIB_OBJS)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(USER_LIBS) $(LINK_MAP)

$(BUILD)/kernel/libxb.a: $(ULIB_OBJS)
	$(call msg,AR,$@)
	$(Q)mkdir -p $(@D) && rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/kernel/kcheck.static: $(KCHECK_OBJS) $(BUILD)/kernel/libxb.a
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CFLAGS) -static $^ -o $@ $(KCHECK_STATIC_LIBS)


$(BUILD)/bench/bpf/%.bpf.o: bench/bpf/%.bpf.c $(BENCH_HDRS) $(BPF_HDRS) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D) && $(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bench/bpf/xdpban_cut%.bpf.o: bpf/xdpban.bpf.c $(BPF_HDRS) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D) && $(CLANG) $(BPF_CFLAGS) -DXDPBAN_BENCH_CUT=$* -c $< -o $@

$(BUILD)/bench/%: bench/%.c $(HARNESS_OBJS) $(UCOMMON) $(ULIB_OBJS) $(HARNESS_HDRS) $(BENCH_HDRS) $(SKELS) | $(BUILD)
	$(call msg,CCLD,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) -Ibench $< $(HARNESS_OBJS) $(UCOMMON) $(ULIB_OBJS) -o $@ \
		$(USER_LIBS) -lm $(LINK_MAP)

$(BUILD)/bench/%.static: bench/%.c $(HARNESS_OBJS) $(UCOMMON) $(BUILD)/kernel/libxb.a $(HARNESS_HDRS) $(BENCH_HDRS) $(SKELS) | $(BUILD)
	$(call msg,CCLD,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) -Ibench -static $< $(HARNESS_OBJS) $(UCOMMON) \
		$(BUILD)/kernel/libxb.a -o $@ $(KCHECK_STATIC_LIBS) -lm

$(BUILD)/fuzz/obj/%.o: user/%.c $(U_HDRS) $(SKELS) $(wildcard include/*.h) | $(BUILD)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D) && $(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

# The harnesses' own support is not what is fuzzed: no coverage for it.
$(BUILD)/fuzz/obj/support.o: tests/fuzz/support.c tests/fuzz/support.h | $(BUILD)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D) && $(CLANG) $(FUZZ_CFLAGS) -c $< -o $@

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS) tests/fuzz/support.h $(U_HDRS)
	$(call msg,FUZZ-LD,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) -o $@ $(USER_LIBS) $(LINK_MAP)

fuzz-build: $(FUZZ_BINS)
	@:

# The unit tests once more, with the sanitizers, into $(BUILD)/asan: this Makefile again with
# another BUILD. tests/run.sh runs them after the plain ones.
asan:
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/asan SANITIZE="$(SAN_FLAGS)" asan-tests

asan-tests: $(TESTS)
	@:

# The layering of user/ (the comment on the two libraries above), checked on what was built:
# each binary's link map, each object's symbols, each source's includes.
layers: $(UPROGS) $(TESTS) $(BENCHES) $(KCHECK) fuzz-build
	$(Q)python3 tests/tools/layers.py $(BUILD)

# Every compile waits for this directory, and so for check-deps.
$(BUILD): check-deps
	$(Q)mkdir -p $@

# make test builds on every core (CI calls a bare `make test`): the build is a quarter of its time
# on one. A -j of the caller's own is kept.
TEST_BUILD_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc))
test: deps
	$(Q)$(MAKE) --no-print-directory $(TEST_BUILD_JOBS) all
	$(Q)./tests/run.sh $(BUILD)

# Boots Debian 12's stock 6.1 kernel under QEMU (TCG) and runs the kernel check there; the
# kernel package is downloaded once into $(BUILD)/kernels. make test runs it too.
test-kernels: deps
	$(Q)$(MAKE) --no-print-directory $(BUILD)/kernel/kcheck.static
	$(Q)bash tests/e2e/e2e_kernels.sh $(BUILD)

# Runs every fuzz harness for FUZZ_TIME seconds (default 60) each; fails if one finds anything.
fuzz: deps
	$(Q)$(MAKE) --no-print-directory fuzz-build
	$(Q)./tests/fuzz/run.sh $(BUILD) $(FUZZ_TIME)

# The demo builds and installs only what it runs: the two programs (with the BPF object in
# them) and their packages.
demo: deps-demo
	$(Q)$(MAKE) --no-print-directory PROGRAMS_ONLY=1 $(BUILD)/xdpband $(BUILD)/xdpban
	$(Q)./deploy/demo.sh $(BUILD)

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)./bench/run.sh $(BUILD) quick

bench-full: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)./bench/run.sh $(BUILD) full

# Installs the programs, man pages, bash completion, systemd unit, sample config, fail2ban
# action and jail example and the BPF object (and, through install-lib, the application
# library). The unit's and the action's paths follow PREFIX; an existing
# /etc/xdpban/xdpban.conf is never overwritten. BPFDIR holds the object for plain `ip link`
# (docs/iplink.md); FAIL2BANDIR is fail2ban's config (the Debian package puts the two files
# among its examples: installing an action is the admin's choice).
SBINDIR  ?= $(PREFIX)/sbin
MANDIR   ?= $(PREFIX)/share/man
UNITDIR  ?= $(PREFIX)/lib/systemd/system
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR ?= /etc
BPFDIR   ?= $(PREFIX)/lib/xdpban
FAIL2BANDIR ?= $(SYSCONFDIR)/fail2ban
FAIL2BAN_FILES := action.d/xdpban.conf jail.d/xdpban.conf.example
# What install takes from the build, and nothing else: debian/rules builds this alone.
installable: $(BUILD)/xdpband $(BUILD)/xdpban $(BUILD)/xdpban.bpf.o $(LIBAPI)
	@:
install: $(BUILD)/xdpband $(BUILD)/xdpban $(BUILD)/xdpban.bpf.o
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/xdpban $(DESTDIR)$(COMPLETIONDIR) \
		$(DESTDIR)$(BPFDIR)
	$(Q)install -m 0755 $(BUILD)/xdpband $(BUILD)/xdpban $(DESTDIR)$(SBINDIR)/
	$(Q)install -m 0644 $(BUILD)/xdpban.bpf.o $(DESTDIR)$(BPFDIR)/
	$(Q)install -m 0644 deploy/xdpban.bash $(DESTDIR)$(COMPLETIONDIR)/xdpban
	$(Q)ln -sf xdpban $(DESTDIR)$(COMPLETIONDIR)/xdpband
	$(Q)install -m 0644 deploy/xdpban.8 deploy/xdpband.8 $(DESTDIR)$(MANDIR)/man8/
	$(Q)install -m 0644 deploy/xdpban.conf.5 $(DESTDIR)$(MANDIR)/man5/
	$(Q)sed 's|/usr/local/sbin|$(SBINDIR)|g; s|/etc/xdpban|$(SYSCONFDIR)/xdpban|g' \
		deploy/xdpband.service > $(DESTDIR)$(UNITDIR)/xdpband.service
	$(Q)chmod 0644 $(DESTDIR)$(UNITDIR)/xdpband.service
	$(Q)[ -e $(DESTDIR)$(SYSCONFDIR)/xdpban/xdpban.conf ] || \
		install -m 0644 deploy/xdpban.conf $(DESTDIR)$(SYSCONFDIR)/xdpban/xdpban.conf
	$(Q)install -d $(DESTDIR)$(FAIL2BANDIR)/action.d $(DESTDIR)$(FAIL2BANDIR)/jail.d
	$(Q)for f in $(FAIL2BAN_FILES); do \
		sed 's|/usr/local/sbin|$(SBINDIR)|g' deploy/fail2ban/$$f > $(DESTDIR)$(FAIL2BANDIR)/$$f && \
		chmod 0644 $(DESTDIR)$(FAIL2BANDIR)/$$f || exit 1; \
	done

# The application library, its header (with the report statuses it names), pkg-config file and
# man page; install runs it too. ldconfig only for a real install (no DESTDIR).
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
install: install-lib
install-lib: $(LIBAPI)
	$(call msg,INSTALL,$(DESTDIR)$(LIBDIR)/libxdpban)
	$(Q)install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(MANDIR)/man3
	$(Q)install -m 0755 $(BUILD)/lib/$(LIBAPI_SONAME) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sf $(LIBAPI_SONAME) $(DESTDIR)$(LIBDIR)/libxdpban.so
	$(Q)install -m 0644 $(BUILD)/lib/libxdpban.a $(DESTDIR)$(LIBDIR)/
	$(Q)install -m 0644 include/xdpban.h include/xdpban_report.h $(DESTDIR)$(INCLUDEDIR)/
	$(Q)install -m 0644 deploy/libxdpban.3 $(DESTDIR)$(MANDIR)/man3/
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' \
		deploy/xdpban.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/xdpban.pc
	$(Q)[ -n "$(DESTDIR)" ] || ldconfig

# Removes what install put, with the same variables, and nothing else: the directories it
# shares with other software stay, and so does the config, which is the admin's.
uninstall: uninstall-lib
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(DESTDIR)$(SBINDIR)/xdpband $(DESTDIR)$(SBINDIR)/xdpban \
		$(DESTDIR)$(BPFDIR)/xdpban.bpf.o \
		$(DESTDIR)$(COMPLETIONDIR)/xdpban $(DESTDIR)$(COMPLETIONDIR)/xdpband \
		$(DESTDIR)$(MANDIR)/man8/xdpban.8 $(DESTDIR)$(MANDIR)/man8/xdpband.8 \
		$(DESTDIR)$(MANDIR)/man5/xdpban.conf.5 $(DESTDIR)$(UNITDIR)/xdpband.service \
		$(addprefix $(DESTDIR)$(FAIL2BANDIR)/,$(FAIL2BAN_FILES))
	$(Q)[ ! -d $(DESTDIR)$(BPFDIR) ] || rmdir --ignore-fail-on-non-empty $(DESTDIR)$(BPFDIR)
	@[ ! -e $(DESTDIR)$(SYSCONFDIR)/xdpban/xdpban.conf ] || \
		echo "xdpban: kept $(DESTDIR)$(SYSCONFDIR)/xdpban/xdpban.conf, the admin's: remove it by hand"

uninstall-lib:
	$(Q)rm -f $(DESTDIR)$(LIBDIR)/$(LIBAPI_SONAME) $(DESTDIR)$(LIBDIR)/libxdpban.so \
		$(DESTDIR)$(LIBDIR)/libxdpban.a $(DESTDIR)$(LIBDIR)/pkgconfig/xdpban.pc \
		$(DESTDIR)$(INCLUDEDIR)/xdpban.h $(DESTDIR)$(INCLUDEDIR)/xdpban_report.h \
		$(DESTDIR)$(MANDIR)/man3/libxdpban.3
	$(Q)[ -n "$(DESTDIR)" ] || ldconfig

# The Debian package (debian/), built by Debian's tools from a copy of the source tree (less
# .git and the build directory) in $(BUILD)/deb/src, so that neither the tree nor its parent
# gets the build's leftovers, and with an empty environment, so that no variable given to this
# make (BUILD, PREFIX, ...) reaches debian/rules. The .deb, its debug symbols, .buildinfo and
# .changes land in $(BUILD)/deb, with build.log; debian/changelog's version must be VERSION.
# XDPBAN_DEB_JOBS compiles in parallel (default 2).
DEB_DIR := $(BUILD)/deb
DEB_SRC := $(DEB_DIR)/src/xdpban-$(VERSION)
deb: check-deps
	$(Q)v=$$(dpkg-parsechangelog -S Version) && [ "$$v" = "$(VERSION)" ] || \
		{ echo "xdpban: debian/changelog is at $$v, the Makefile's VERSION at $(VERSION)" >&2; exit 1; }
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	$(Q)tar -c --exclude-vcs --exclude=./build \
		--exclude='./$(patsubst $(CURDIR)/%,%,$(abspath $(BUILD)))' -f - . | tar -x -C $(DEB_SRC)
	$(call msg,DEB,$(DEB_DIR)/xdpban_$(VERSION)_$(shell dpkg --print-architecture).deb)
	$(Q)log=$(abspath $(DEB_DIR))/build.log; cd $(DEB_SRC) && \
		env -i PATH="$$PATH" HOME="$$HOME" \
		DEB_BUILD_OPTIONS="parallel=$${XDPBAN_DEB_JOBS:-2} $$DEB_BUILD_OPTIONS" \
		dpkg-buildpackage -us -uc -b >$$log 2>&1 || \
		{ tail -n 20 $$log >&2; echo "xdpban: dpkg-buildpackage failed: $$log" >&2; exit 1; }
	$(Q)find $(DEB_DIR)/src -maxdepth 1 -type f -exec mv -t $(DEB_DIR) {} +
	$(Q)rm -rf $(DEB_DIR)/src

clean:
	$(Q)rm -rf $(BUILD)
