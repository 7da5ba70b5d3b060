# Checks shared by test_install.sh and test_deb.sh: an installed fabriclab (PREFIX/bin/fabriclab,
# PREFIX/lib/libnccl-net-fabriclab.so ...) works from where it was put, and says one version
# everywhere. The caller defines ok/not_ok and $tmp; $version is the build's version string.

# The version the build folder was made with (the Makefile's stamp).
build_version() { # build
	cat "$1/gen/version"
}

# `fabriclab --version` of the installed binary says the build's version.
check_installed_version() { # prefix_root
	local got
	got=$("$1/bin/fabriclab" --version 2>&1)
	if [ "$got" = "fabriclab $version" ]; then
		ok "installed fabriclab --version: $got"
	else
		not_ok "installed fabriclab --version: '$got', expected 'fabriclab $version'"
	fi
	# The doctor's JSON too (exit 1 is a failed check on this machine, still a report).
	"$1/bin/fabriclab" doctor --json >"$tmp/doctor.json" 2>/dev/null
	if grep -qF "\"fabriclab_version\": \"$version\"" "$tmp/doctor.json"; then
		ok "installed fabriclab doctor --json names fabriclab_version $version"
	else
		not_ok "installed fabriclab doctor --json without fabriclab_version $version"
	fi
}

# Two local ranks through the installed tool with NCCL_NET_PLUGIN unset: the tool must load the
# installed plugin from ../lib beside itself (the dynamic loader's own log names the file), the
# plugin's first INFO line and its reports must carry the version, and so must the textfile.
check_installed_plugin() { # prefix_root, name
	local prefix=$1 name=$2 out=$tmp/$2 first
	mkdir -p "$out/reports"
	if ! env -u NCCL_NET_PLUGIN -u LD_LIBRARY_PATH LD_DEBUG=files NCCL_DEBUG=INFO \
		NCCL_DEBUG_SUBSYS=NET FABRICLAB_REPORT_DIR="$out/reports" \
		"$prefix/bin/fabriclab" bench --ranks 2 -b 8 -e 64K -n 2 -w 1 \
		>"$out/bench.out" 2>"$out/bench.err"; then
		# Leave out the dynamic loader's own lines ("  1234:	...").
		not_ok "$name: installed fabriclab bench failed: $(grep -v '^ *[0-9]*:' \
			"$out/bench.err" | tail -n 3)"
		return
	fi
	if grep -q "file=$prefix/bin/../lib/libnccl-net-fabriclab.so .*dynamically loaded" \
		"$out/bench.err"; then
		ok "$name: the tool loaded the installed plugin from ../lib"
	else
		not_ok "$name: the installed plugin was not what the tool loaded: $(grep -m3 \
			'libnccl-net-fabriclab.so' "$out/bench.err")"
	fi
	# The plugin loads its LTTng provider from its own folder (liblttng-ust is in deps.sh).
	if grep -q "file=$prefix/bin/../lib/libfabriclab-lttng.so .*dynamically loaded" \
		"$out/bench.err"; then
		ok "$name: the plugin loaded the installed LTTng provider beside itself"
	else
		not_ok "$name: the installed LTTng provider was not loaded"
	fi
	first=$(grep -m1 'NET/fabriclab' "$out/bench.err")
	if [[ "$first" == *"NET/fabriclab : fabriclab $version" ]]; then
		ok "$name: the plugin's first INFO line: ${first##*: }"
	else
		not_ok "$name: the plugin's first INFO line is '$first', not 'fabriclab $version'"
	fi
	local tagged
	tagged=$(grep -lF "\"fabriclab_version\": \"$version\"" "$out"/reports/*.json | wc -l)
	if [ "$tagged" -eq 2 ]; then
		ok "$name: both reports carry fabriclab_version $version"
	else
		not_ok "$name: reports without fabriclab_version $version: $(grep -h \
			fabriclab_version "$out"/reports/*.json)"
	fi
	tagged=$(grep -lxF "fabriclab $version, transport socket" "$out"/reports/*.txt | wc -l)
	if [ "$tagged" -eq 2 ]; then
		ok "$name: both readable reports name fabriclab $version"
	else
		not_ok "$name: readable reports without 'fabriclab $version'"
	fi
	if "$prefix/bin/fabriclab" report "$out/reports" --prom "$out/f.prom" >/dev/null &&
		grep -qxF "fabriclab_build_info{version=\"$version\"} 1" "$out/f.prom"; then
		ok "$name: the merged textfile's build_info says $version"
	else
		not_ok "$name: no fabriclab_build_info{version=\"$version\"} in the textfile"
	fi
}
