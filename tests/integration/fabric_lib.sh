# Sourced by the tests and benches that run the emulated fabric (fabric/README.md): they
# describe it in a file, as the lab does, instead of setting FABRICLAB_FAKEVERBS_* overrides.

# The fake's own devices on two nodes, what a description holds unless told otherwise.
FABRIC_NODES='[{"name": "node0", "nics": [{"name": "mlx5_0", "port": "ib:4x:hdr"}, {"name": "mlx5_1", "port": "eth:4x:25g"}]}, {"name": "node1", "nics": [{"name": "mlx5_0", "port": "ib:4x:hdr"}, {"name": "mlx5_1", "port": "eth:4x:25g"}]}]'

# Writes a description to FILE whose state lives in DIR (made here); EMULATION adds members to
# its "emulation" object (', "dmabuf": true'), NODES replaces its "nodes", GPUS is its "gpus"
# object, every node's emulated GPUs ('{"protect": true}'). Point FABRICLAB_FABRIC at FILE to
# use it.
describe_fabric() { # file dir [emulation] [nodes] [gpus]
	mkdir -p "$2" &&
		printf '{"fabriclab_fabric": 1, "emulation": {"state_dir": "%s"%s}, "nodes": %s%s}\n' \
			"$2" "${3:-}" "${4:-$FABRIC_NODES}" "${5:+, \"gpus\": $5}" >"$1"
}
