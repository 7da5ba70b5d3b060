#!/usr/bin/env bash
# The container image `make image` wrote (BUILD/fabriclab-image.oci.tar), run as a cluster would:
#  - the archive is an OCI layout named for podman (ref.name) and containerd
#    (io.containerd.image.name), with the manifest.json docker's own store loads; umoci unpacks it
#    and skopeo (where installed) reads it both ways;
#  - its entrypoint and command (`fabriclab --version`) say the version it was built from, which
#    starts with the tree's VERSION; every library the tool needs resolves inside the image;
#  - the report-merge Job's command (deploy/k8s/report-merge-job.yaml) on fixture reports
#    mounted in at /reports: the verdict, the SVG and the textfile, the same as the tree's tool;
#  - `lab --serve` answers over HTTP from inside the image (libmicrohttpd, issue 52);
#  - the init container's copy step, as deploy/k8s/ writes it, into an empty volume: the plugin
#    and its LTTng provider side by side where NCCL_NET_PLUGIN points, the plugin exporting only
#    NCCL's tables and needing only libc; this machine (another userland, as a training image
#    is) loads that copy through the shim, and the copy loads the provider beside it;
#  - the image's size, printed.
# The image is entered as a container runtime would (its config's environment, /dev and /proc,
# volumes bound in), with unshare and chroot: no daemon, no runtime, but root.
#
# It does not build the image. From nothing, `make image` takes minutes on 2 cores (debootstrap,
# two apt-get installs, a compile inside the build stage, vfs copies of every layer: 5 to 8
# minutes here, see deploy/README.md), which the whole suite's 10 minutes cannot hold; it exits
# 77 naming `make image` when there is no archive, and when the archive was built from another
# version than the tree's (a stale image is not this tree's to judge). After `make image` it
# runs in 20 to 40 s. Needs root, umoci, unshare, python3 and curl (77 naming what is missing).
# Usage: test_image.sh [BUILD_DIR]
set -u
build=$(cd "${1:-build}" && pwd) || exit 1
root=$(cd "$(dirname "$0")/../.." && pwd)
archive=$build/fabriclab-image.oci.tar
failures=0
skip() { echo "skipped: $1"; exit 77; }
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failures=$((failures + 1)); }

[ -f "$archive" ] || skip "no $archive: \`make image\` builds it (minutes: more than the suite's budget), then this test runs it"
[ "$(id -u)" -eq 0 ] || skip "not root: the image's file system is entered with unshare and chroot"
built_from=$(cat "$build/fabriclab-image.version" 2>/dev/null)
tree_version=$("$root/scripts/version.sh")
[ "$built_from" = "$tree_version" ] || skip "$archive was built from ${built_from:-an unknown version}, the tree is $tree_version: \`make image\` again"
for t in umoci unshare python3 curl; do
	command -v $t >/dev/null || skip "no $t here (scripts/deps.sh image installs umoci)"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fabriclab-image.XXXXXX")
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

# --- the archive -------------------------------------------------------------------------------
mkdir "$tmp/oci"
tar -C "$tmp/oci" -xf "$archive" || { not_ok "$archive does not unpack with tar"; exit 1; }
# The names each loader reads: podman ref.name, containerd io.containerd.image.name, docker's own
# store manifest.json, whose config and layers must be the OCI manifest's.
names=$(python3 - "$tmp/oci" <<-'EOF'
	import json, os, sys
	top = sys.argv[1]
	path = lambda digest: "blobs/" + digest.replace(":", "/")
	m = json.load(open(os.path.join(top, "index.json")))["manifests"]
	a = m[0].get("annotations", {}) if len(m) == 1 else {}
	print(a.get("org.opencontainers.image.ref.name", "-"), a.get("io.containerd.image.name", "-"))
	try:
	    oci = json.load(open(os.path.join(top, path(m[0]["digest"]))))
	    docker = json.load(open(os.path.join(top, "manifest.json")))
	    assert len(docker) == 1, "one image"
	    assert docker[0]["Config"] == path(oci["config"]["digest"]), "the OCI manifest's config"
	    assert docker[0]["Layers"] == [path(l["digest"]) for l in oci["layers"]], "its layers"
	    assert all(os.path.isfile(os.path.join(top, p)) for p in docker[0]["Layers"]), "all there"
	    print(" ".join(docker[0]["RepoTags"]))
	except Exception as e:
	    print("manifest.json: %s %s" % (type(e).__name__, e))
EOF
)
{ read -r ref containerd_name; read -r docker_tags; } <<<"$names"
tag=${ref##*:}
if [ -n "$(cat "$tmp/oci/oci-layout" 2>/dev/null)" ] && [ "$ref" = "fabriclab:$tag" ] &&
	[ "$containerd_name" = "docker.io/library/fabriclab:$tag" ]; then
	ok "an OCI layout named $ref (podman load) and $containerd_name (ctr import)"
else
	not_ok "the archive's names: ref.name '$ref', io.containerd.image.name '$containerd_name'"
fi
[ "$docker_tags" = "$ref" ] && ok "its manifest.json (docker load) names the same config and layers, tagged $ref" ||
	not_ok "its manifest.json (docker load): $docker_tags"
# containers/image (what podman load and skopeo use) reads both views, where skopeo is here.
if command -v skopeo >/dev/null; then
	for view in oci-archive docker-archive; do
		if skopeo inspect --config "$view:$archive" >"$tmp/$view.json" 2>"$tmp/skopeo.err" &&
			grep -q '"fabriclab"' "$tmp/$view.json"; then
			ok "skopeo reads it as $view, entrypoint fabriclab"
		else
			not_ok "skopeo cannot read it as $view: $(tail -n 2 "$tmp/skopeo.err")"
		fi
	done
fi
if ! umoci unpack --image "$tmp/oci:$ref" "$tmp/bundle" >"$tmp/umoci.log" 2>&1; then
	not_ok "umoci cannot unpack $ref: $(tail -n 3 "$tmp/umoci.log")"
	exit 1
fi
rootfs=$tmp/bundle/rootfs
ok "umoci unpacked it"

# The runtime's view of the image: its environment and its entrypoint + command, one a line.
python3 - "$tmp/bundle/config.json" "$tmp/env" "$tmp/args" <<-'EOF'
	import json, sys
	p = json.load(open(sys.argv[1]))["process"]
	open(sys.argv[2], "w").write("".join(e + "\n" for e in p["env"]))
	open(sys.argv[3], "w").write("".join(a + "\n" for a in p["args"]))
EOF
mapfile -t image_env <"$tmp/env"
mapfile -t default_args <"$tmp/args"

# Runs a command in the image: a mount namespace of its own (so the mounts vanish with it), the
# host's /dev and a /proc as a runtime gives, volumes bound where the manifests mount them.
# in_image [-v HOST:PATH[:ro]]... -- COMMAND...
in_image() {
	local binds=()
	while [ "$1" != -- ]; do binds+=("$2"); shift 2; done
	shift
	unshare --mount --pid --fork --kill-child --propagation private bash -c '
		set -e
		rootfs=$1; shift
		mount --rbind /dev "$rootfs/dev"
		mount -t proc proc "$rootfs/proc"
		while [ "$1" != -- ]; do
			IFS=: read -r host path mode <<<"$1"; shift
			mkdir -p "$rootfs$path"
			mount --bind "$host" "$rootfs$path"
			[ "$mode" != ro ] || mount -o remount,bind,ro "$rootfs$path"
		done
		shift
		exec chroot "$rootfs" /usr/bin/env -i "$@"' in_image "$rootfs" "${binds[@]}" -- \
		"${image_env[@]}" "$@"
}

# --- the tool ----------------------------------------------------------------------------------
base=$(tr -d ' \n' <"$root/VERSION")
got=$(in_image -- "${default_args[@]}" 2>&1)
if [ "$got" = "fabriclab $built_from" ] && [[ $built_from == "$base" || $built_from == "$base+"* ]]
then
	ok "the image's default command (${default_args[*]}): $got"
else
	not_ok "the image's default command (${default_args[*]}) says '$got', expected 'fabriclab $built_from' (VERSION $base)"
fi
missing=$(in_image -- ldd /opt/fabriclab/bin/fabriclab /opt/fabriclab/lib/libfabriclab-lttng.so 2>&1 |
	grep 'not found')
[ -z "$missing" ] && ok "every library of the tool and the provider resolves in the image" ||
	not_ok "libraries missing from the image: $missing"

# The merge Job's own command, its reports volume holding a healthy and a slow-device job.
job_cmd=$(python3 - "$root/deploy/k8s/report-merge-job.yaml" <<-'EOF'
	import sys, yaml
	c = yaml.safe_load(open(sys.argv[1]))["spec"]["template"]["spec"]["containers"][0]
	assert c["command"][:2] == ["sh", "-c"] and c["volumeMounts"][0]["mountPath"] == "/reports"
	print(c["command"][2])
EOF
)
fixtures=$root/tests/fixtures/reports
vol=$tmp/reports
mkdir -p "$vol/fabriclab-train"
# One folder per pod, as FABRICLAB_REPORT_DIR=/reports/<job>/$(POD_NAME) writes them.
for f in "$fixtures"/slow_device8/*.json; do
	pod=$vol/fabriclab-train/pod-$(basename "$f" .json)
	mkdir "$pod" && cp "$f" "$pod/"
done
if [ -n "$job_cmd" ] && in_image -v "$vol:/reports" -- sh -c "$job_cmd" >"$tmp/job.out" 2>&1; then
	ok "the report-merge Job's command ran in the image"
else
	not_ok "the report-merge Job's command failed in the image: $(tail -n 3 "$tmp/job.out")"
fi
(cd "$vol/fabriclab-train" && "$build/fabriclab" report */ >"$tmp/host.txt" 2>&1)
if cmp -s "$tmp/host.txt" "$vol/fabriclab-train/verdict.txt" &&
	grep -q 'verdict: device  n2/eth0' "$tmp/job.out"; then
	ok "its verdict (device n2/eth0) is the tree's tool's, word for word"
else
	not_ok "the image's verdict differs from the tree's tool's: $(diff "$tmp/host.txt" \
		"$vol/fabriclab-train/verdict.txt" | head -n 5)"
fi
if grep -q '<svg' "$vol/fabriclab-train/ring.svg" 2>/dev/null &&
	grep -qxF "fabriclab_build_info{version=\"$built_from\"} 1" \
		"$vol/fabriclab-train/fabriclab.prom" 2>/dev/null &&
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' \
		"$vol/fabriclab-train/merged.json" 2>/dev/null; then
	ok "ring.svg, fabriclab.prom (build_info $built_from) and merged.json written to the volume"
else
	not_ok "the Job's files on the volume: $(ls "$vol/fabriclab-train")"
fi
# A read-only fixture folder, as a user mounts a copy of their reports: `fabriclab report` alone.
if in_image -v "$fixtures/healthy4:/reports:ro" -- fabriclab report /reports >"$tmp/healthy.out" \
	2>&1 && grep -q '^verdict: none' "$tmp/healthy.out"; then
	ok "fabriclab report on a read-only mounted folder: $(head -n 1 "$tmp/healthy.out" | cut -c1-40)"
else
	not_ok "fabriclab report /reports (healthy4): $(tail -n 3 "$tmp/healthy.out")"
fi

# `lab --serve` (libmicrohttpd, the library the image once lacked) answers from inside the image.
if in_image -- fabriclab lab --serve --help 2>&1 | grep -q -- '--listen A:P'; then
	ok "fabriclab lab --serve --help"
else
	not_ok "fabriclab lab --serve --help in the image: $(in_image -- fabriclab lab --serve --help 2>&1 | tail -n 1)"
fi
in_image -- fabriclab lab --serve --listen 127.0.0.1:0 --dir /tmp/runs >"$tmp/serve.out" 2>&1 &
server=$!
for _ in $(seq 100); do grep -q 'serving the lab on' "$tmp/serve.out" && break; sleep 0.1; done
url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$tmp/serve.out")
if [ -n "$url" ] && curl -sf "$url/" | grep -qi '<html' &&
	curl -sf "$url/api/status" | grep -q idle; then
	ok "lab --serve in the image answers on $url: the page, and status idle"
else
	not_ok "lab --serve in the image: $(tail -n 3 "$tmp/serve.out")"
fi
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
server=

# --- the init container's copy -----------------------------------------------------------------
# Its command and mount path, and where the trainer finds the plugin, from every manifest that
# copies the plugin (they must agree), as written in deploy/k8s/.
copy=$(python3 - "$root"/deploy/k8s/*.yaml <<-'EOF'
	import sys, yaml
	seen = set()
	def walk(node):
	    if isinstance(node, dict):
	        for c in node.get("initContainers", []) or []:
	            if c.get("name") == "fabriclab-plugin":
	                seen.add((" ".join(c["command"]), c["volumeMounts"][0]["mountPath"]))
	        for v in node.values():
	            walk(v)
	    elif isinstance(node, list):
	        for v in node:
	            walk(v)
	for path in sys.argv[1:]:
	    for doc in yaml.safe_load_all(open(path)):
	        walk(doc)
	assert len(seen) == 1, seen
	print("%s\t%s" % seen.pop())
EOF
)
IFS=$'\t' read -r copy_cmd mount_path <<<"$copy"
plugin_env=$(grep -ho 'value: /opt/fabriclab/lib/libnccl-net-fabriclab.so' \
	"$root"/deploy/k8s/pytorchjob.yaml | head -n 1)
shared=$tmp/emptydir
mkdir "$shared"
# shellcheck disable=SC2086 # the manifest's command, word by word as Kubernetes passes it
if [ -n "$copy_cmd" ] && [ -n "$plugin_env" ] &&
	in_image -v "$shared:$mount_path" -- $copy_cmd >"$tmp/copy.out" 2>&1; then
	ok "the init container's step ($copy_cmd) into an empty volume at $mount_path"
else
	not_ok "the init container's step failed: '$copy_cmd' at '$mount_path': $(tail -n 3 \
		"$tmp/copy.out" 2>/dev/null)"
fi
# The trainer mounts the volume at /opt/fabriclab: NCCL_NET_PLUGIN's path inside it.
so=$shared/${plugin_env#value: /opt/fabriclab/}
if [ -f "$so" ] && [ -f "$(dirname "$so")/libfabriclab-lttng.so" ] &&
	[ "$(readlink "$(dirname "$so")/libnccl-profiler-fabriclab.so")" = "$(basename "$so")" ]; then
	ok "the plugin, its profiler name and its LTTng provider side by side where NCCL_NET_PLUGIN points"
else
	not_ok "the volume holds: $(cd "$shared" && find . | head -n 20 | tr '\n' ' ')"
fi
exported=$(nm -D --defined-only "$so" 2>&1 | awk '$2 != "A" &&
	$3 !~ /^nccl(NetPlugin|Profiler|TunerPlugin|CollNetPlugin|GinPlugin|RmaPlugin)_v[0-9]+$/')
needs=$(readelf -d "$so" 2>&1 | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
	grep -Ev '^(libc|libpthread|libdl)\.so|^ld-linux')
if [ -z "$exported" ] && [ -z "$needs" ] && nm -D --defined-only "$so" | grep -q ncclNetPlugin_v; then
	ok "nm -D: the copied plugin exports only NCCL's tables and needs only libc"
else
	not_ok "the copied plugin exports '$exported', needs '$needs'"
fi
# This machine as the training image: the shim loads the copy, the copy its provider.
if env -u LD_LIBRARY_PATH LD_DEBUG=files NCCL_NET_PLUGIN="$so" FABRICLAB_REPORT_DIR="$tmp/r" \
	"$build/fabriclab" bench --ranks 2 -b 8 -e 64K -n 2 -w 1 >"$tmp/bench.out" 2>"$tmp/bench.err" &&
	grep -q "file=$so .*dynamically loaded" "$tmp/bench.err" &&
	grep -q "file=$(dirname "$so")/libfabriclab-lttng.so .*dynamically loaded" "$tmp/bench.err"
then
	ok "a 2-rank bench here loads the copied plugin, and it loads the provider beside it"
else
	not_ok "the copied plugin did not run a bench here: $(grep -v '^ *[0-9]*:' "$tmp/bench.err" |
		tail -n 3)"
fi

# --- size --------------------------------------------------------------------------------------
layers=$(python3 - "$tmp/oci" <<-'EOF'
	import json, os, sys
	d = sys.argv[1]
	blob = lambda dg: os.path.join(d, "blobs", *dg.split(":"))
	man = json.load(open(blob(json.load(open(os.path.join(d, "index.json")))["manifests"][0]["digest"])))
	print(" + ".join("%.1f" % (l["size"] / 2**20) for l in man["layers"]))
EOF
)
echo "# image size: archive $(du -m "$archive" | cut -f1) MiB (layers compressed: $layers MiB)," \
	"unpacked $(du -sm "$rootfs" | cut -f1) MiB"

echo "$failures failed"
[ "$failures" -eq 0 ]
