# fabriclab: the NCCL net plugin, the shim that stands in for NCCL, the tools and the tests.
# Plain `make` builds everything; `make demo` and `make test` also install what they need.

CC      ?= gcc
BUILD   ?= build
OPT     ?= -O2
SAN     ?=
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# Includes name their folder: "base/error.h" inside plugin/, "plugin/base/error.h" elsewhere.
CFLAGS  := -std=c11 -D_GNU_SOURCE $(OPT) -g $(WARN) -pthread -I. -Iplugin $(SAN) $(EXTRA_CFLAGS)
LDFLAGS := -pthread $(SAN)

PLUGIN_SO   := $(BUILD)/libnccl-net-fabriclab.so
# The same object under the name NCCL's profiler loader looks for (NCCL_PROFILER_PLUGIN=fabriclab).
PROFILER_SO := $(BUILD)/libnccl-profiler-fabriclab.so
PLUGIN_LIB  := $(BUILD)/libfabriclab-plugin.a
SHIM_LIB    := $(BUILD)/libfabriclab-shim.a
TOOL_LIB    := $(BUILD)/libfabriclab-tools.a
TOOL        := $(BUILD)/fabriclab

LTTNG_DIR   := plugin/trace/lttng
PLUGIN_SRC  := $(sort $(filter-out $(LTTNG_DIR)/%,$(shell find plugin -name '*.c')))
SHIM_SRC    := $(sort $(wildcard shim/*.c))
TOOL_SRC    := $(filter-out tools/fabriclab.c,$(sort $(shell find tools -name '*.c'))) \
	$(sort $(wildcard fabric/topo/*.c))
UNIT_SRC    := $(sort $(wildcard tests/unit/*.c))
ITEST_SRC   := $(sort $(wildcard tests/integration/*.c))
BENCH_SRC   := $(sort $(wildcard bench/*.c))
# The profiler-event player the tests and benchmarks drive the ncclProfiler_vN tables with.
PLAYER_SRC  := $(sort $(wildcard tests/player/*.c))
PLAYER_LIB  := $(BUILD)/libfabriclab-player.a
# Test infrastructure and the run-time-loaded tracepoint provider: shared objects of their own.
# The emulated fabric (fabric/README.md): the NIC, with the description it reads.
FAKEVERBS_SRC := $(sort $(wildcard fabric/nic/*.c fabric/topo/*.c))
FAKEVERBS_SO  := $(BUILD)/libfabriclab-fakeverbs.so
# ... and the GPU, with the same description reader.
FAKECUDA_SRC  := $(sort $(wildcard fabric/gpu/*.c fabric/topo/*.c))
FAKECUDA_SO   := $(BUILD)/libfabriclab-fakecuda.so
FAKEVERBS_LIB1 := $(BUILD)/fakeverbs-lib/libibverbs.so.1
FAKEVERBS_MAP := fabric/nic/libibverbs.map
LTTNG_SRC     := $(sort $(wildcard $(LTTNG_DIR)/*.c))
LTTNG_SO      := $(BUILD)/libfabriclab-lttng.so

PLUGIN_OBJ  := $(PLUGIN_SRC:%.c=$(BUILD)/obj/%.o)
# Test artifacts, never installed: the socket transport as standalone NCCL net plugins that the
# ext transport wraps like third-party ones, each exporting one ABI version, and misbehaving ones.
INNER_DIR   := $(BUILD)/inner
INNER_VERS  := 5 6 8 10 11 12
# NAME:FLSOCK_SWITCH[+SWITCH]:VERSION (tests/inner/flsock_net.c says what each switch does)
INNER_ODD   := nosizes:NO_SIZES:12 nullreq:NULL_REQUESTS:12 initfail:INIT_FAILS:12 \
	fill:FILLS_IN_INIT:12 fill-v6:FILLS_IN_INIT:6 fill-notest:FILLS_IN_INIT+FILL_MISSES_TEST:12 \
	config:READS_CONFIG:12 config-v10:READS_CONFIG:10 record:RECORDS:12 record-v10:RECORDS:10 \
	nodev:NO_DEVICES:12 \
	waitaccept:WAIT_ACCEPT+IN_ORDER+NO_SIZES:12 extras:EXTRAS:12 \
	cts:WAIT_CTS:12
# The thinnest layers over another plugin (bench only): NAME:WRAP:SPIN_NS, tests/inner/forward_net.c
FORWARDS    := call:0:0 wrap:1:0 spin100:1:100
INNER_SO    := $(INNER_VERS:%=$(INNER_DIR)/libnccl-net-flsock-v%.so) \
	$(foreach o,$(INNER_ODD),$(INNER_DIR)/libnccl-net-flsock-$(word 1,$(subst :, ,$(o))).so) \
	$(INNER_DIR)/libnccl-net-nonet.so $(INNER_DIR)/libnccl-net-null.so \
	$(INNER_DIR)/libnccl-net-devoff-v9.so $(INNER_DIR)/libnccl-net-devoff-v12.so \
	$(INNER_DIR)/libnccl-net-mimic-v11.so $(INNER_DIR)/libnccl-net-mimic-v12.so \
	$(foreach f,$(FORWARDS),$(foreach v,11 12,$(INNER_DIR)/libnccl-net-forward-$(word 1,$(subst :, ,$(f)))-v$(v).so)) \
	$(INNER_DIR)/libnccl-net-hostile.so $(INNER_DIR)/libnccl-net-tap-v8.so \
	$(INNER_DIR)/libnccl-net-tap-v12.so
INNER_OBJ   := $(filter $(BUILD)/obj/plugin/base/% $(BUILD)/obj/plugin/transport/socket/% \
	$(BUILD)/obj/plugin/transport/pace.o,$(PLUGIN_OBJ))
# Plugins with one hook compiled out (-DFABRICLAB_NO_<X>): only `make bench` uses them, to measure
# what counting, fault hooks and tracepoints cost when unused.
VARIANTS    := nocount nofault notrace
VARIANT_SO  := $(VARIANTS:%=$(BUILD)/%/libnccl-net-fabriclab.so)
SHIM_OBJ    := $(SHIM_SRC:%.c=$(BUILD)/obj/%.o)
PLAYER_OBJ  := $(PLAYER_SRC:%.c=$(BUILD)/obj/%.o)
TOOL_OBJ    := $(TOOL_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_BIN    := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
ITEST_BIN   := $(ITEST_SRC:tests/integration/%.c=$(BUILD)/tests/%)
BENCH_BIN   := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
# Third-party stand-in profilers that fabriclab's profiler role chains to (tests/profnext), each
# exporting the tables MIN..MAX: NAME:MIN:MAX. Tests and `make bench` only, never installed.
PROFNEXT    := count:1:7 count-v7:7:7 count-v6:6:6 count-v5:5:5 count-v4:4:4 count-v3:3:3 count-v1:1:1
PROFNEXT_SO := $(foreach p,$(PROFNEXT),$(BUILD)/profnext/libnccl-profiler-$(word 1,$(subst :, ,$(p))).so)

.PHONY: all deps demo test unit integration bench validate sanitize clean install uninstall deb image FORCE fuzz fuzz-build
all: $(PLUGIN_SO) $(PROFILER_SO) $(TOOL) $(UNIT_BIN) $(ITEST_BIN) $(BENCH_BIN) $(INNER_SO) $(PROFNEXT_SO) \
	$(if $(FAKEVERBS_SRC),$(FAKEVERBS_SO) $(FAKEVERBS_LIB1)) $(if $(FAKECUDA_SRC),$(FAKECUDA_SO)) \
	$(if $(LTTNG_SRC),$(LTTNG_SO))

deps:
	@scripts/deps.sh

# The plugin: hidden by default, only the ncclNetPlugin_vN tables are exported;
# at load time it needs nothing but libc, libpthread and libdl.
PLUGIN_HDR := $(shell find plugin -name '*.h')
ALL_HDR    := $(PLUGIN_HDR) $(shell find shim tools tests bench fabric -name '*.h')

$(BUILD)/obj/plugin/%.o: plugin/%.c $(PLUGIN_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(BUILD)/obj/%.o: %.c $(ALL_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# One version string (scripts/version.sh: git describe, or the VERSION file in a tarball) for the
# plugin, the tool, the reports and the package. Only plugin/base/version.c sees it, as a define;
# the stamp changes only when the string does, so a new commit rebuilds that one object.
VERSION_STRING := $(shell scripts/version.sh)
VERSION_STAMP  := $(BUILD)/gen/version
VERSION_OBJ    := $(patsubst %,$(BUILD)/%/plugin/base/version.o,obj $(VARIANTS:%=obj-%))
$(VERSION_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(VERSION_STRING)' | cmp -s - $@ || echo '$(VERSION_STRING)' >$@
$(VERSION_OBJ): $(VERSION_STAMP)
$(VERSION_OBJ): CFLAGS += -DFABRICLAB_VERSION='"$(VERSION_STRING)"'

# The shared objects name themselves (SONAME = file name): installed in a library folder, ldconfig
# and Debian's tools expect it; NCCL and the plugin dlopen() them by that name or a path.
$(PLUGIN_SO): $(PLUGIN_OBJ)
	$(CC) -shared -o $@ $^ $(LDFLAGS) -Wl,-z,defs -Wl,--as-needed -Wl,-soname,$(notdir $@) -ldl

# A symlink: one object, so both names dlopen to the same handle and share their state.
$(PROFILER_SO): $(PLUGIN_SO)
	ln -sf $(notdir $(PLUGIN_SO)) $@

define variant_rules
$(BUILD)/obj-$(1)/plugin/%.o: plugin/%.c $(PLUGIN_HDR)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) -DFABRICLAB_$(2) -fPIC -fvisibility=hidden -c $$< -o $$@

$(BUILD)/$(1)/libnccl-net-fabriclab.so: $(PLUGIN_SRC:%.c=$(BUILD)/obj-$(1)/%.o)
	@mkdir -p $$(dir $$@)
	$(CC) -shared -o $$@ $$^ $(LDFLAGS) -Wl,-z,defs -Wl,--as-needed -ldl
endef
$(eval $(call variant_rules,nocount,NO_COUNTING))
$(eval $(call variant_rules,nofault,NO_FAULTS))
$(eval $(call variant_rules,notrace,NO_TRACING))

INNER_LINK = $(CC) $(CFLAGS) -fPIC -fvisibility=hidden -shared -o $@ $(1) $< $(INNER_OBJ) \
	$(LDFLAGS) -Wl,-z,defs -ldl
$(INNER_DIR)/libnccl-net-flsock-v%.so: tests/inner/flsock_net.c tests/inner/flsock_abi.h \
		$(INNER_OBJ) $(PLUGIN_HDR)
	@mkdir -p $(dir $@)
	$(call INNER_LINK,-DFLSOCK_VERSION=$*)
define inner_odd_rule
$(INNER_DIR)/libnccl-net-flsock-$(1).so: tests/inner/flsock_net.c $(wildcard tests/inner/flsock_*.h) \
		$(INNER_OBJ) $(PLUGIN_HDR)
	@mkdir -p $$(dir $$@)
	$$(call INNER_LINK,-DFLSOCK_VERSION=$(3) $(addprefix -DFLSOCK_,$(subst +, ,$(2))))
endef
$(foreach o,$(INNER_ODD),$(eval $(call inner_odd_rule,$(word 1,$(subst :, ,$(o))),$(word 2,$(subst :, ,$(o))),$(word 3,$(subst :, ,$(o))))))
$(INNER_DIR)/libnccl-net-nonet.so: tests/inner/nonet.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -o $@ $<
$(INNER_DIR)/libnccl-net-devoff-v%.so: tests/inner/devoff_net.c tests/inner/devoff_record.h \
		$(PLUGIN_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DDEVOFF_VERSION=$* -fPIC -fvisibility=hidden -shared -o $@ $<
$(INNER_DIR)/libnccl-net-null.so: tests/inner/null_net.c $(PLUGIN_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -shared -o $@ $<
define forward_rule
$(INNER_DIR)/libnccl-net-forward-$(1)-v%.so: tests/inner/forward_net.c $(PLUGIN_HDR)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) -DFORWARD_VERSION=$$* -DFORWARD_WRAP=$(2) -DFORWARD_SPIN_NS=$(3) -fPIC \
		-fvisibility=hidden -shared -o $$@ $$< -ldl
endef
$(foreach f,$(FORWARDS),$(eval $(call forward_rule,$(word 1,$(subst :, ,$(f))),$(word 2,$(subst :, ,$(f))),$(word 3,$(subst :, ,$(f))))))
define profnext_rule
$(BUILD)/profnext/libnccl-profiler-$(1).so: tests/profnext/count_profiler.c $(PLUGIN_HDR)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) -DCOUNT_MIN=$(2) -DCOUNT_MAX=$(3) -fPIC -fvisibility=hidden -shared -o $$@ $$<
endef
$(foreach p,$(PROFNEXT),$(eval $(call profnext_rule,$(word 1,$(subst :, ,$(p))),$(word 2,$(subst :, ,$(p))),$(word 3,$(subst :, ,$(p))))))
# An inner that lies (sizes, names, maxRecvs, never done): tests/inner/hostile_net.c
$(INNER_DIR)/libnccl-net-hostile.so: tests/inner/hostile_net.c $(PLUGIN_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -shared -o $@ $< -ldl

# Forwards to FABRICLAB_TAP_INNER and writes down what the caller did (tests/inner/tap_net.c)
$(INNER_DIR)/libnccl-net-tap-v%.so: tests/inner/tap_net.c $(PLUGIN_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DTAP_VERSION=$* -fPIC -fvisibility=hidden -shared -o $@ $< \
		$(LDFLAGS) -Wl,-z,defs -ldl

# Behaves like real plugins as FABRICLAB_MIMIC says (early completion, profiler events, no sizes)
$(INNER_DIR)/libnccl-net-mimic-v%.so: tests/inner/mimic_net.c tests/inner/mimic_record.h \
		$(PLUGIN_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DMIMIC_VERSION=$* -fPIC -fvisibility=hidden -shared -o $@ $< \
		$(LDFLAGS) -Wl,-z,defs

# The fake libibverbs (tests only, never part of the plugin): selected with FABRICLAB_IBVERBS_LIB,
# or found as libibverbs.so.1 by programs linked against rdma-core's when LD_LIBRARY_PATH names
# $(BUILD)/fakeverbs-lib. Both carry rdma-core's symbol versions (the version script).
FAKEVERBS_OBJ := $(FAKEVERBS_SRC:%.c=$(BUILD)/obj-pic/%.o)
$(BUILD)/obj-pic/fabric/%.o: fabric/%.c $(wildcard fabric/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -c $< -o $@

# nodelete: the NIC thread (fv_nic.c) and the atexit report (fv_physics.c) outlive a dlclose,
# as a plugin that opens libibverbs itself (IBext, our verbs_load.c on failure) may close it.
FAKEVERBS_LDFLAGS := $(LDFLAGS) -Wl,-z,defs -Wl,-z,nodelete -Wl,--version-script=$(FAKEVERBS_MAP) -lrt \
	-ljansson
$(FAKEVERBS_SO): $(FAKEVERBS_OBJ) $(FAKEVERBS_MAP)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(FAKEVERBS_OBJ) $(FAKEVERBS_LDFLAGS)

$(FAKEVERBS_LIB1): $(FAKEVERBS_OBJ) $(FAKEVERBS_MAP)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libibverbs.so.1 -o $@ $(FAKEVERBS_OBJ) $(FAKEVERBS_LDFLAGS)

# The fake CUDA runtime and driver (tests and the lab): selected with FABRICLAB_CUDART_LIB. Only
# its CUDA calls and fakecuda* hooks are exported: the description's reader inside stays its own.
$(FAKECUDA_SO): $(FAKECUDA_SRC) $(wildcard fabric/gpu/*.h fabric/topo/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -shared -o $@ $(FAKECUDA_SRC) $(LDFLAGS) \
		-Wl,-z,defs -ljansson

# tests/gpu: the real-NCCL driver, built with gcc against the CUDA toolkit's nccl.h, libnccl and
# libcudart where tests/gpu/find_toolkit.sh finds them (CUDA_HOME, /usr/local/cuda, ...) and
# skipped elsewhere: nothing else needs CUDA to build. `make GPU_TOOLKIT=` skips it anyway. Its
# parts without CUDA have a unit test built everywhere.
ifeq ($(origin GPU_TOOLKIT),undefined)
GPU_TOOLKIT := $(shell sh tests/gpu/find_toolkit.sh 2>/dev/null)
endif
GPU_DRIVER  := $(BUILD)/gpu/nccl_driver
GPU_UNIT    := $(BUILD)/tests/test_gpu_driver_unit
GPU_SRC     := tests/gpu/driver_args.c tests/gpu/driver_check.c tests/gpu/driver_launch.c \
	tests/gpu/driver_uid.c
GPU_LIBDIRS := $(patsubst %/,%,$(dir $(word 2,$(GPU_TOOLKIT))) $(dir $(word 4,$(GPU_TOOLKIT))))
.PHONY: gpu-driver
all: gpu-driver
gpu-driver: $(GPU_UNIT) $(if $(GPU_TOOLKIT),$(GPU_DRIVER))
	$(if $(GPU_TOOLKIT),,@echo "gpu-driver: $(GPU_DRIVER) skipped: no CUDA toolkit with NCCL" \
		"(tests/gpu/find_toolkit.sh says why)")
ifneq ($(GPU_TOOLKIT),)
# RUNPATH, not RPATH: LD_LIBRARY_PATH (another libnccl.so.2) still wins at run time.
$(GPU_DRIVER): tests/gpu/nccl_driver.c tests/gpu/driver_rank.c $(GPU_SRC) $(wildcard tests/gpu/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(addprefix -isystem ,$(sort $(word 1,$(GPU_TOOLKIT)) $(word 3,$(GPU_TOOLKIT)))) \
		-o $@ $(filter %.c,$^) $(LDFLAGS) $(word 2,$(GPU_TOOLKIT)) $(word 4,$(GPU_TOOLKIT)) \
		-Wl,--enable-new-dtags $(foreach d,$(sort $(GPU_LIBDIRS)),-Wl,-rpath=$(d))
else
$(GPU_DRIVER):
	@echo "$@: no CUDA toolkit with NCCL (tests/gpu/find_toolkit.sh --why says where it looked)" >&2
	@false
endif
$(GPU_UNIT): tests/gpu/driver_unit.c $(GPU_SRC) $(wildcard tests/gpu/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter %.c,$^) $(LDFLAGS) -lcmocka

# The LTTng-UST tracepoint provider: the plugin dlopen()s it when liblttng-ust is installed.
$(LTTNG_SO): $(LTTNG_SRC) $(wildcard $(LTTNG_DIR)/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -I$(LTTNG_DIR) -o $@ $(LTTNG_SRC) $(LDFLAGS) -Wl,-z,defs \
		-Wl,-soname,$(notdir $@) -llttng-ust -llttng-ust-common -ldl

$(PLUGIN_LIB): $(PLUGIN_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(SHIM_LIB): $(SHIM_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(TOOL_LIB): $(TOOL_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(PLAYER_LIB): $(PLAYER_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The tools link the plugin's archive for the code they share with it (the verdict).
LIBS := $(TOOL_LIB) $(SHIM_LIB) $(PLUGIN_LIB)
SYSLIBS := -ljansson -lbabeltrace2 -lmicrohttpd -ldl -lm

$(TOOL): $(BUILD)/obj/tools/fabriclab.o $(LIBS) $(PLUGIN_SO)
	$(CC) -o $@ $< $(LIBS) $(LDFLAGS) $(SYSLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIBS) $(ALL_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIBS) $(LDFLAGS) -lcmocka $(SYSLIBS)

$(BUILD)/tests/%: tests/integration/%.c $(PLAYER_LIB) $(LIBS) $(ALL_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(PLAYER_LIB) $(LIBS) $(LDFLAGS) -lcmocka $(SYSLIBS)

$(BUILD)/bench/%: bench/%.c $(PLAYER_LIB) $(LIBS) $(ALL_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(PLAYER_LIB) $(LIBS) $(LDFLAGS) $(SYSLIBS)

# Installed layout: PREFIX/bin/fabriclab; the plugin and the LTTng provider side by side in
# PREFIX/lib (the plugin loads the provider from its own folder, the tool finds the plugin in
# ../lib); README.md, docs/ and the Kubernetes examples in PREFIX/share/doc/fabriclab; one man
# page per command.
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  := $(PREFIX)/bin
LIBDIR  := $(PREFIX)/lib
DOCDIR  := $(PREFIX)/share/doc/fabriclab
MAN1DIR := $(PREFIX)/share/man/man1
MAN_PAGES := $(sort $(wildcard docs/man/*.1))
DOC_FILES := $(sort $(wildcard docs/*.md))
DOC_IMAGES := $(sort $(wildcard docs/img/*.svg))
K8S_FILES := $(sort $(wildcard deploy/k8s/*.yaml))
# The profiler role's name (NCCL_PROFILER_PLUGIN=fabriclab loads libnccl-profiler-fabriclab.so):
# install links that name to the same object, which exports the ncclProfiler_v* tables too.
PROFILER_LINK := libnccl-profiler-fabriclab.so
INSTALLED := $(BINDIR)/fabriclab $(LIBDIR)/$(notdir $(PLUGIN_SO)) $(LIBDIR)/$(notdir $(LTTNG_SO)) \
	$(LIBDIR)/$(PROFILER_LINK) $(MAN_PAGES:docs/man/%=$(MAN1DIR)/%)

install: $(PLUGIN_SO) $(LTTNG_SO) $(TOOL)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(MAN1DIR) \
		$(DESTDIR)$(DOCDIR)/docs $(DESTDIR)$(DOCDIR)/docs/img
	install -m 755 $(TOOL) $(DESTDIR)$(BINDIR)/
	install -m 644 $(PLUGIN_SO) $(LTTNG_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(PLUGIN_SO)) $(DESTDIR)$(LIBDIR)/$(PROFILER_LINK)
	install -m 644 README.md $(DESTDIR)$(DOCDIR)/
	install -m 644 $(DOC_FILES) $(DESTDIR)$(DOCDIR)/docs/
	install -m 644 $(DOC_IMAGES) $(DESTDIR)$(DOCDIR)/docs/img/
	install -d $(DESTDIR)$(DOCDIR)/deploy/k8s
	install -m 644 deploy/README.md $(DESTDIR)$(DOCDIR)/deploy/
	install -m 644 $(K8S_FILES) $(DESTDIR)$(DOCDIR)/deploy/k8s/
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(MAN1DIR)/

uninstall:
	rm -f $(INSTALLED:%=$(DESTDIR)%)
	rm -rf $(DESTDIR)$(DOCDIR)

# A Debian package of the same files under /usr (scripts/deb.sh: control, copyright, changelog,
# stripped objects), named build/fabriclab_<version>_<arch>.deb.
deb: $(PLUGIN_SO) $(LTTNG_SO) $(TOOL)
	@rm -rf $(BUILD)/deb
	@$(MAKE) --no-print-directory -s install PREFIX=/usr DESTDIR=$(BUILD)/deb/debian/fabriclab
	@scripts/deb.sh $(BUILD)/deb '$(VERSION_STRING)' $(BUILD)

# The container image of deploy/Dockerfile (scripts/image.sh): a debootstrap Debian 12 base
# cached in $(BUILD)/image, the image built on it with buildah (no daemon, no registry) and
# written to $(BUILD)/fabriclab-image.oci.tar for docker/podman load. Needs root and Debian's
# archive; tests/integration/test_image.sh runs what it wrote.
image:
	@scripts/deps.sh image
	@scripts/image.sh $(BUILD) '$(VERSION_STRING)'

# Fuzz targets (tests/fuzz/fuzz_*.c): libFuzzer with clang, under ASan and UBSan, linked with
# the plugin and tool sources they exercise, compiled again with coverage into $(BUILD)/fuzz.
FUZZ_CC    ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SAN   := address,undefined
FUZZ_FLAGS := -std=c11 -D_GNU_SOURCE -O1 -g -I. -Iplugin -pthread -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
FUZZ_SRC   := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN   := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_LIB_SRC := $(sort $(shell find plugin/base plugin/fault plugin/stats plugin/verdict plugin/port \
	-name '*.c') plugin/transport/socket/sock_handle.c plugin/transport/socket/sock_sys.c \
	$(filter-out tools/report/report_main.c,$(wildcard tools/report/*.c)) tools/trace/trace_check.c \
	tools/common/tool_text.c tools/common/tool_json_arena.c $(filter-out tools/nccllog/nccllog_main.c,$(wildcard tools/nccllog/*.c)) \
	tools/sweep/sweep_baseline.c tools/sweep/sweep_judge.c shim/shim_error.c \
	$(wildcard fabric/topo/*.c) $(filter-out tools/topology/topo_report.c,$(wildcard tools/topology/*.c)))
FUZZ_OBJ   := $(FUZZ_LIB_SRC:%.c=$(BUILD)/fuzz/obj/%.o)
FUZZ_LIB   := $(BUILD)/fuzz/libfabriclab-fuzz.a

$(BUILD)/fuzz/obj/%.o: %.c $(ALL_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SAN) -c $< -o $@

# The version string reaches the fuzz build's copy of version.c as it reaches the plugin's.
$(BUILD)/fuzz/obj/plugin/base/version.o: $(VERSION_STAMP)
$(BUILD)/fuzz/obj/plugin/base/version.o: FUZZ_FLAGS += -DFABRICLAB_VERSION='"$(VERSION_STRING)"'

$(FUZZ_LIB): $(FUZZ_OBJ)
	ar rcs $@ $^

$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB) $(ALL_HDR)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer,$(FUZZ_SAN) -o $@ $< $(FUZZ_LIB) -ljansson -ldl -lm

fuzz-build: $(FUZZ_BIN)

# Each target for FUZZ_SECONDS from the committed corpus; what it finds stays in $(BUILD)/fuzz.
fuzz: deps
	@$(MAKE) --no-print-directory fuzz-build
	@tests/fuzz/run.sh $(BUILD) $(FUZZ_SECONDS)

# `make demo` builds quietly, so that what it shows is the demo: no command lines, only what a
# failing command prints (a compile error in full) and make's one line per failed target.
# V=1 shows every command, as a plain `make` does.
QUIET_BUILD := $(if $(filter 1,$(V)),,-s)

demo: deps
	@$(if $(QUIET_BUILD),echo "building $(BUILD)/ quietly (V=1 shows the commands)")
	@$(MAKE) --no-print-directory $(QUIET_BUILD) all
	@scripts/demo.sh $(BUILD)

test: deps
	@$(MAKE) --no-print-directory all $(if $(shell command -v $(FUZZ_CC)),fuzz-build)
	@tests/run.sh $(BUILD)

bench:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory all $(VARIANT_SO)
	@bench/run.sh $(BUILD)

# The diagnosis scored on lab cases drawn from seeds (bench/validate/README.md): SET=tuning (the
# cases looked at while changing the model) or SET=validation (only to report a figure), COUNT
# cases from START. OUT=FILE keeps every case's result; FROM=FILE scores kept results again.
SET   ?= tuning
COUNT ?= 40
START ?= 0
validate: deps
	@$(MAKE) --no-print-directory -s all
	@python3 bench/validate/run.py --set $(SET) --count $(COUNT) --start $(START) \
		--tool $(TOOL) $(if $(OUT),--out $(OUT)) $(if $(FROM),--from $(FROM))

# Everything under ASan+UBSan, then under TSan, each in its own build folder.
sanitize: deps
	@$(MAKE) --no-print-directory all $(if $(shell command -v $(FUZZ_CC)),fuzz-build) \
		BUILD=build-asan OPT=-O1 \
		SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
	@FABRICLAB_SANITIZER=asan tests/run.sh build-asan
	@$(MAKE) --no-print-directory all $(if $(shell command -v $(FUZZ_CC)),fuzz-build) \
		BUILD=build-tsan OPT=-O1 SAN="-fsanitize=thread"
	@FABRICLAB_SANITIZER=tsan tests/run.sh build-tsan

clean:
	rm -rf build build-asan build-tsan
