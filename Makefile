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
PLUGIN_LIB  := $(BUILD)/libfabriclab-plugin.a
SHIM_LIB    := $(BUILD)/libfabriclab-shim.a
TOOL_LIB    := $(BUILD)/libfabriclab-tools.a
TOOL        := $(BUILD)/fabriclab

LTTNG_DIR   := plugin/trace/lttng
PLUGIN_SRC  := $(sort $(filter-out $(LTTNG_DIR)/%,$(shell find plugin -name '*.c')))
SHIM_SRC    := $(sort $(wildcard shim/*.c))
TOOL_SRC    := $(filter-out tools/fabriclab.c,$(sort $(shell find tools -name '*.c')))
UNIT_SRC    := $(sort $(wildcard tests/unit/*.c))
ITEST_SRC   := $(sort $(wildcard tests/integration/*.c))
BENCH_SRC   := $(sort $(wildcard bench/*.c))
# Test infrastructure and the run-time-loaded tracepoint provider: shared objects of their own.
FAKEVERBS_SRC := $(sort $(wildcard tests/fakeverbs/*.c))
FAKEVERBS_SO  := $(BUILD)/libfabriclab-fakeverbs.so
LTTNG_SRC     := $(sort $(wildcard $(LTTNG_DIR)/*.c))
LTTNG_SO      := $(BUILD)/libfabriclab-lttng.so

PLUGIN_OBJ  := $(PLUGIN_SRC:%.c=$(BUILD)/obj/%.o)
# Plugins with one hook compiled out (-DFABRICLAB_NO_<X>): only `make bench` uses them, to measure
# what counting, fault hooks and tracepoints cost when unused.
VARIANTS    := nocount nofault notrace
VARIANT_SO  := $(VARIANTS:%=$(BUILD)/%/libnccl-net-fabriclab.so)
SHIM_OBJ    := $(SHIM_SRC:%.c=$(BUILD)/obj/%.o)
TOOL_OBJ    := $(TOOL_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_BIN    := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
ITEST_BIN   := $(ITEST_SRC:tests/integration/%.c=$(BUILD)/tests/%)
BENCH_BIN   := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all deps demo test unit integration bench sanitize clean fuzz fuzz-build
all: $(PLUGIN_SO) $(TOOL) $(UNIT_BIN) $(ITEST_BIN) $(BENCH_BIN) $(if $(FAKEVERBS_SRC),$(FAKEVERBS_SO)) \
	$(if $(LTTNG_SRC),$(LTTNG_SO))

deps:
	@scripts/deps.sh

# The plugin: hidden by default, only the ncclNetPlugin_vN tables are exported;
# at load time it needs nothing but libc, libpthread and libdl.
PLUGIN_HDR := $(shell find plugin -name '*.h')
ALL_HDR    := $(PLUGIN_HDR) $(shell find shim tools tests bench -name '*.h')

$(BUILD)/obj/plugin/%.o: plugin/%.c $(PLUGIN_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(BUILD)/obj/%.o: %.c $(ALL_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(PLUGIN_SO): $(PLUGIN_OBJ)
	$(CC) -shared -o $@ $^ $(LDFLAGS) -Wl,-z,defs -Wl,--as-needed -ldl

define variant_rules
$(BUILD)/obj-$(1)/plugin/%.o: plugin/%.c $(PLUGIN_HDR)
	@mkdir -p $$(dir $$@)
	$(CC) $(CFLAGS) -DFABRICLAB_$(2) -fPIC -fvisibility=hidden -c $$< -o $$@

$(BUILD)/$(1)/libnccl-net-fabriclab.so: $(PLUGIN_SRC:%.c=$(BUILD)/obj-$(1)/%.o)
	@mkdir -p $$(dir $$@)
	$(CC) -shared -o $$@ $$^ $(LDFLAGS) -Wl,-z,defs -Wl,--as-needed -ldl
endef
$(eval $(call variant_rules,nocount,NO_COUNTING))
$(eval $(call variant_rules,nofault,NO_FAULTS))
$(eval $(call variant_rules,notrace,NO_TRACING))

# The fake libibverbs (tests only, never part of the plugin): selected with FABRICLAB_IBVERBS_LIB.
$(FAKEVERBS_SO): $(FAKEVERBS_SRC) $(wildcard tests/fakeverbs/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -o $@ $(FAKEVERBS_SRC) $(LDFLAGS) -Wl,-z,defs -lrt

# The LTTng-UST tracepoint provider: the plugin dlopen()s it when liblttng-ust is installed.
$(LTTNG_SO): $(LTTNG_SRC) $(wildcard $(LTTNG_DIR)/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -I$(LTTNG_DIR) -o $@ $(LTTNG_SRC) $(LDFLAGS) -Wl,-z,defs \
		-llttng-ust -llttng-ust-common -ldl

$(PLUGIN_LIB): $(PLUGIN_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(SHIM_LIB): $(SHIM_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(TOOL_LIB): $(TOOL_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The tools link the plugin's archive for the code they share with it (the verdict).
LIBS := $(TOOL_LIB) $(SHIM_LIB) $(PLUGIN_LIB)
SYSLIBS := -ljansson -lbabeltrace2 -ldl -lm

$(TOOL): $(BUILD)/obj/tools/fabriclab.o $(LIBS) $(PLUGIN_SO)
	$(CC) -o $@ $< $(LIBS) $(LDFLAGS) $(SYSLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIBS) $(ALL_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIBS) $(LDFLAGS) -lcmocka $(SYSLIBS)

$(BUILD)/tests/%: tests/integration/%.c $(LIBS) $(ALL_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIBS) $(LDFLAGS) -lcmocka $(SYSLIBS)

$(BUILD)/bench/%: bench/%.c $(LIBS) $(ALL_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIBS) $(LDFLAGS) $(SYSLIBS)

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
	$(filter-out tools/report/report_main.c,$(wildcard tools/report/*.c)) tools/trace/trace_check.c)
FUZZ_OBJ   := $(FUZZ_LIB_SRC:%.c=$(BUILD)/fuzz/obj/%.o)
FUZZ_LIB   := $(BUILD)/fuzz/libfabriclab-fuzz.a

$(BUILD)/fuzz/obj/%.o: %.c $(ALL_HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SAN) -c $< -o $@

$(FUZZ_LIB): $(FUZZ_OBJ)
	ar rcs $@ $^

$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB) $(ALL_HDR)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer,$(FUZZ_SAN) -o $@ $< $(FUZZ_LIB) -ljansson -ldl -lm

fuzz-build: $(FUZZ_BIN)

# Each target for FUZZ_SECONDS from the committed corpus; what it finds stays in $(BUILD)/fuzz.
fuzz: deps
	@$(MAKE) --no-print-directory fuzz-build
	@tests/fuzz/run.sh $(BUILD) $(FUZZ_SECONDS)

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh $(BUILD)

test: deps
	@$(MAKE) --no-print-directory all $(if $(shell command -v $(FUZZ_CC)),fuzz-build)
	@tests/run.sh $(BUILD)

bench: deps
	@$(MAKE) --no-print-directory all $(VARIANT_SO)
	@bench/run.sh $(BUILD)

# Everything under ASan+UBSan, then under TSan, each in its own build folder.
sanitize: deps
	@$(MAKE) --no-print-directory all BUILD=build-asan OPT=-O1 \
		SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
	@FABRICLAB_SANITIZER=asan tests/run.sh build-asan
	@$(MAKE) --no-print-directory all BUILD=build-tsan OPT=-O1 SAN="-fsanitize=thread"
	@FABRICLAB_SANITIZER=tsan tests/run.sh build-tsan

clean:
	rm -rf build build-asan build-tsan
