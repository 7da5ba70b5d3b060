#!/usr/bin/env bash
# `make image`: the container image of deploy/Dockerfile, built without a daemon or a registry,
# written as an OCI archive that `docker load`, `podman load` and `ctr import` accept.
#   1. a Debian 12 base: debootstrap --variant=minbase bookworm from Debian's archive, made once
#      and kept as a tarball in BUILD/image/ (DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR override the
#      archives);
#   2. buildah (vfs storage in BUILD/image/storage, chroot isolation: no daemon, no runtime, no
#      overlay mounts) imports it and builds deploy/Dockerfile on it, with its layers cached;
#   3. the image is written to BUILD/fabriclab-image.oci.tar, and the version it was built with to
#      BUILD/fabriclab-image.version (tests/integration/test_image.sh runs that archive).
# Needs root (debootstrap, buildah's chroot isolation) and the Debian packages buildah,
# debootstrap (scripts/deps.sh image installs them).
# Usage: scripts/image.sh BUILD_DIR VERSION
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR VERSION" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd -P)
build=$(mkdir -p "$1" && cd "$1" && pwd -P)
version=$2
work=$build/image
archive=$build/fabriclab-image.oci.tar
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
suite=bookworm
base_tar=$work/debian-$suite-minbase.tar
base_name=localhost/fabriclab-base:$suite
# An image tag allows [A-Za-z0-9_.-] only: 0.2.0+3.g1a2b3c4d is tagged 0.2.0-3.g1a2b3c4d.
tag=$(printf '%s' "$version" | tr -c 'A-Za-z0-9_.-' '-')
image=localhost/fabriclab:$tag

die() { echo "image.sh: $*" >&2; exit 1; }
step() { echo "== $* ($(date +%T))"; }
[ "$(id -u)" -eq 0 ] || die "needs root: debootstrap and buildah's chroot isolation run as root"
for tool in buildah debootstrap; do
	command -v $tool >/dev/null || die "no $tool: scripts/deps.sh image installs it"
done
mkdir -p "$work"
# One storage of our own, inside the build folder: `make clean` removes it, and the machine's
# own /var/lib/containers is never touched.
bah() { buildah --root "$work/storage" --runroot "$work/run" --storage-driver vfs "$@"; }

# The debootstrap tree, tarred: a tarball keeps owners, modes and device nodes as they were
# without a root file system lying in the build folder.
make_base() {
	local tree=$work/rootfs.tmp
	rm -rf "$tree"
	debootstrap --variant=minbase "$suite" "$tree" "$mirror" >"$work/debootstrap.log" 2>&1 ||
		die "debootstrap $suite from $mirror failed: $(tail -n 3 "$work/debootstrap.log")"
	# As Debian's own images: the point releases and the security archive, not only the suite.
	rm -f "$tree/etc/apt/sources.list"
	cat >"$tree/etc/apt/sources.list.d/debian.sources" <<-EOF
		Types: deb
		URIs: $mirror
		Suites: $suite $suite-updates
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

		Types: deb
		URIs: $security
		Suites: $suite-security
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	# No documentation in the image, and no downloaded package kept in a layer.
	cat >"$tree/etc/dpkg/dpkg.cfg.d/fabriclab-image" <<-'EOF'
		path-exclude /usr/share/doc/*
		path-include /usr/share/doc/*/copyright
		path-exclude /usr/share/man/*
		path-exclude /usr/share/info/*
		path-exclude /usr/share/locale/*
	EOF
	printf '%s\n' 'APT::Keep-Downloaded-Packages "false";' 'Acquire::Languages "none";' \
		>"$tree/etc/apt/apt.conf.d/fabriclab-image"
	chroot "$tree" apt-get clean
	find "$tree/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
	rm -rf "$tree"/usr/share/man/* "$tree"/usr/share/info/* "$tree"/usr/share/locale/* \
		"$tree"/var/lib/apt/lists/* "$tree"/var/log/*.log "$tree"/var/cache/debconf/*-old
	tar --numeric-owner --xattrs -C "$tree" -cf "$base_tar.tmp" .
	mv "$base_tar.tmp" "$base_tar"
	rm -rf "$tree"
}

# The tarball as an image of one layer, with the environment Debian's images give a shell.
import_base() {
	local ctr mnt
	bah rmi -f "$base_name" >/dev/null 2>&1 || true
	ctr=$(bah from --pull=false scratch)
	mnt=$(bah mount "$ctr")
	tar --numeric-owner --xattrs -C "$mnt" -xpf "$base_tar"
	bah umount "$ctr" >/dev/null
	bah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		--cmd bash --os linux --arch "$(dpkg --print-architecture)" \
		--label "org.opencontainers.image.description=Debian $suite minbase (debootstrap)" "$ctr"
	bah commit --rm -q "$ctr" "$base_name" >/dev/null
	touch -r "$base_tar" "$work/base.imported"
}

# buildah writes an OCI layout whose ref.name podman load names the image from. containerd
# (ctr import, docker with its containerd store) names it from io.containerd.image.name, and
# docker's own store loads only what has a manifest.json (the docker-archive index: config and
# layers by path, tags): both are added, as `docker save` does since Docker 25, and neither is
# part of a digest, so the OCI layout stays valid.
add_docker_names() {
	local dir=$work/archive.tmp
	rm -rf "$dir" && mkdir -p "$dir"
	tar -C "$dir" -xf "$archive.tmp"
	python3 - "$dir" "fabriclab:$tag" <<-'EOF'
		import json, os, sys
		top, name = sys.argv[1], sys.argv[2]
		path = lambda digest: "blobs/" + digest.replace(":", "/")
		with open(os.path.join(top, "index.json")) as f:
		    index = json.load(f)
		entry = index["manifests"][0]
		entry.setdefault("annotations", {})["io.containerd.image.name"] = "docker.io/library/" + name
		with open(os.path.join(top, path(entry["digest"]))) as f:
		    manifest = json.load(f)
		docker = [{"Config": path(manifest["config"]["digest"]), "RepoTags": [name],
		           "Layers": [path(layer["digest"]) for layer in manifest["layers"]]}]
		with open(os.path.join(top, "index.json"), "w") as f:
		    json.dump(index, f)
		with open(os.path.join(top, "manifest.json"), "w") as f:
		    json.dump(docker, f)
	EOF
	(cd "$dir" && tar --numeric-owner -cf "$archive.tmp" oci-layout index.json manifest.json blobs)
	rm -rf "$dir"
}

start=$SECONDS
if [ -f "$base_tar" ]; then
	step "base: $base_tar (cached)"
else
	step "base: debootstrap --variant=minbase $suite from $mirror"
	make_base
fi
if [ "$work/base.imported" -nt "$base_tar" ] || [ "$work/base.imported" -ot "$base_tar" ] ||
	! bah inspect --type image "$base_name" >/dev/null 2>&1; then
	step "base: importing into buildah as $base_name"
	import_base
fi
step "build: deploy/Dockerfile as $image (buildah bud, vfs, chroot isolation)"
bah bud --isolation chroot --layers --pull=false -f "$root/deploy/Dockerfile" \
	--ignorefile "$root/deploy/Dockerfile.dockerignore" \
	--build-arg BASE="$base_name" --build-arg RUNTIME_BASE="$base_name" \
	--build-arg VERSION="$version" -t "$image" "$root"
step "archive: $archive"
rm -f "$archive.tmp"
bah push -q "$image" "oci-archive:$archive.tmp:fabriclab:$tag"
add_docker_names
mv "$archive.tmp" "$archive"
echo "$version" >"$build/fabriclab-image.version"
# The previous builds' tags go (their cached layers stay, for the next build).
for old in $(bah images --format '{{.Name}}:{{.Tag}}' | grep -x 'localhost/fabriclab:.*' |
	grep -vxF "$image"); do
	bah rmi "$old" >/dev/null 2>&1 || true
done
step "done in $((SECONDS - start)) s: $archive, $(du -m "$archive" | cut -f1) MiB" \
	"(the image unpacked: $(bah images --format '{{.Size}}' "$image"))"
