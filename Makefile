# fabriclab: the NCCL net plugin, the shim that stands in for NCCL, the tools and the tests.
# Plain `make` builds everything; `make demo` and `make test` also install what they need.

CC      ?= gcc
BUILD   ?= build
OPT     ?= -O2
SAN     ?=
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS  := -std=c11 -D_GNU_SOURCE $(OPT) -g $(WARN) -pthread $(SAN) $(EXTRA_CFLAGS)
LDFLAGS := -pthread $(SAN)

PLUGIN_SO   := $(BUILD)/libnccl-net-fabriclab.so
PLUGIN_LIB  := $(BUILD)/libfabriclab-plugin.a
SHIM_LIB    := $(BUILD)/libfabriclab-shim.a
TOOL_LIB    := $(BUILD)/libfabriclab-tools.a
TOOL        := $(BUILD)/fabriclab

PLUGIN_SRC  := $(sort $(wildcard plugin/*.c))
SHIM_SRC    := $(sort $(wildcard shim/*.c))
TOOL_SRC    := $(filter-out tools/fabriclab.c,$(sort $(wildcard tools/*.c)))
UNIT_SRC    := $(sort $(wildcard tests/unit/*.c))
ITEST_SRC   := $(sort $(wildcard tests/integration/*.c))
BENCH_SRC   := $(sort $(wildcard bench/*.c))

PLUGIN_OBJ  := $(PLUGIN_SRC:%.c=$(BUILD)/obj/%.o)
# The plugin with counting compiled out: only `make bench` uses it, to measure what counting costs.
NOCOUNT_SO  := $(BUILD)/nocount/libnccl-net-fabriclab.so
NOCOUNT_OBJ := $(PLUGIN_SRC:%.c=$(BUILD)/obj-nocount/%.o)
SHIM_OBJ    := $(SHIM_SRC:%.c=$(BUILD)/obj/%.o)
TOOL_OBJ    := $(TOOL_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_BIN    := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
ITEST_BIN   := $(ITEST_SRC:tests/integration/%.c=$(BUILD)/tests/%)
BENCH_BIN   := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all deps demo test unit integration bench sanitize clean
all: $(PLUGIN_SO) $(TOOL) $(UNIT_BIN) $(ITEST_BIN) $(BENCH_BIN)

deps:
	@scripts/deps.sh

# The plugin: hidden by default, only the ncclNetPlugin_vN tables are exported;
# at load time it needs nothing but libc, libpthread and libdl.
$(BUILD)/obj/plugin/%.o: plugin/%.c $(wildcard plugin/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(BUILD)/obj/%.o: %.c $(wildcard plugin/*.h shim/*.h tools/*.h tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(PLUGIN_SO): $(PLUGIN_OBJ)
	$(CC) -shared -o $@ $^ $(LDFLAGS) -Wl,-z,defs -Wl,--as-needed -ldl

$(BUILD)/obj-nocount/plugin/%.o: plugin/%.c $(wildcard plugin/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DFABRICLAB_NO_COUNTING -fPIC -fvisibility=hidden -c $< -o $@

$(NOCOUNT_SO): $(NOCOUNT_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $^ $(LDFLAGS) -Wl,-z,defs -Wl,--as-needed -ldl

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
SYSLIBS := -ljansson -ldl -lm

$(TOOL): $(BUILD)/obj/tools/fabriclab.o $(LIBS) $(PLUGIN_SO)
	$(CC) -o $@ $< $(LIBS) $(LDFLAGS) $(SYSLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIBS) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIBS) $(LDFLAGS) -lcmocka $(SYSLIBS)

$(BUILD)/tests/%: tests/integration/%.c $(LIBS) $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIBS) $(LDFLAGS) -lcmocka $(SYSLIBS)

$(BUILD)/bench/%: bench/%.c $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIBS) $(LDFLAGS) $(SYSLIBS)

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh $(BUILD)

test: deps
	@$(MAKE) --no-print-directory all
	@tests/run.sh $(BUILD)

bench: deps
	@$(MAKE) --no-print-directory all $(NOCOUNT_SO)
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
