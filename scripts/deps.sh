#!/usr/bin/env bash
# Installs the Debian packages the build, the tests and the demo need, when missing;
# `deps.sh bench` also what `make bench` compares with (iperf3), `deps.sh image` the image's tools.
set -euo pipefail
need=(gcc make clang libclang-rt-14-dev libc6-dev libcmocka-dev libjansson-dev pkg-config iproute2
	procps librsvg2-bin python3
	libibverbs-dev ibverbs-utils perftest liblttng-ust-dev lttng-tools libbabeltrace2-dev babeltrace2
	libmicrohttpd-dev curl chromium chromium-driver locales
	dpkg-dev lintian groff-base python3-yaml python3-jsonschema golang-k8s-kube-openapi-dev)
[ "${1:-}" = bench ] && need+=(iperf3)
# `deps.sh image`: what `make image` builds with and test_image unpacks with.
[ "${1:-}" = image ] && need+=(buildah debootstrap umoci skopeo)
missing=()
for p in "${need[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
# A locale with a decimal comma: test_json_out checks that the plugin's JSON ignores it.
comma_locale=de_DE.UTF-8
has_locale() { locale -a 2>/dev/null | grep -qix 'de_DE\.utf-\?8'; }
has_locale && [ ${#missing[@]} -eq 0 ] && exit 0
# sudo resets the environment, so the frontend setting goes through env.
as_root=(env DEBIAN_FRONTEND=noninteractive)
[ "$(id -u)" -eq 0 ] || as_root=(sudo env DEBIAN_FRONTEND=noninteractive)
if [ ${#missing[@]} -gt 0 ]; then
	echo "installing: ${missing[*]}"
	"${as_root[@]}" apt-get update -qq
	"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! has_locale; then
	echo "generating the $comma_locale locale"
	"${as_root[@]}" localedef -i de_DE -c -f UTF-8 "$comma_locale" || true # warnings: status 1
	has_locale || { echo "deps.sh: $comma_locale still missing after localedef" >&2; exit 1; }
fi
