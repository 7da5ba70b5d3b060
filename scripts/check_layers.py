#!/usr/bin/env python3
"""Checks that includes run one way between the folders of plugin/, tools/ and shim/.

Each folder may include headers from its own folder and from the folders listed for it
below, nothing else; every folder has a README.md saying what it owns. Prints one line
per violation and exits 1 when there is any. Usage: check_layers.py [ROOT]
"""
import os
import re
import sys

# folder -> folders whose headers it may include (besides its own).
ALLOWED = {
    "plugin/base": [],
    "plugin/abi": ["plugin/base"],
    "plugin/stats": ["plugin/base"],
    "plugin/verdict": ["plugin/base"],
    "plugin/port": ["plugin/base"],
    "plugin/transport": ["plugin/base"],
    "plugin/transport/socket": ["plugin/transport", "plugin/base"],
    "plugin/transport/ib": ["plugin/transport/socket", "plugin/transport", "plugin/base"],
    "plugin/host": ["plugin/abi", "plugin/base"],
    "plugin/transport/ext": ["plugin/transport", "plugin/host", "plugin/abi", "plugin/base"],
    "plugin/fault": ["plugin/transport", "plugin/base"],
    "plugin/report": ["plugin/fault", "plugin/port", "plugin/stats", "plugin/verdict",
                      "plugin/transport", "plugin/base"],
    "plugin/trace/lttng": [],
    "plugin/trace": ["plugin/trace/lttng", "plugin/report", "plugin/fault", "plugin/port",
                     "plugin/stats", "plugin/verdict", "plugin/transport", "plugin/base"],
    "plugin/wrap": ["plugin/trace", "plugin/trace/lttng", "plugin/report", "plugin/fault",
                    "plugin/stats", "plugin/transport", "plugin/base"],
    "plugin/profiler": ["plugin/report", "plugin/trace", "plugin/trace/lttng", "plugin/stats",
                        "plugin/fault", "plugin/port", "plugin/verdict", "plugin/transport",
                        "plugin/base"],
    # the ncclNetPlugin_vN / ncclProfiler_vN tables fabriclab exports: the top floor
    "plugin/entry": ["plugin/wrap", "plugin/profiler", "plugin/transport", "plugin/abi",
                     "plugin/base"],
    "shim": ["plugin/host", "plugin/abi", "plugin/base"],
}
# plugin/ is built in floors, ground first: a folder may include only folders on floors below
# its own, so no include runs back up (or sideways) from one plugin/ folder to another.
# NCCL's ABI (abi/: every version's types and slots) is the ground floor the exported tables
# (entry/), the ext transport and the shim all stand on.
FLOORS = [
    ["plugin/base", "plugin/trace/lttng"],
    ["plugin/abi", "plugin/stats", "plugin/verdict", "plugin/port"],
    ["plugin/host"],
    ["plugin/transport"],
    ["plugin/transport/socket", "plugin/transport/ext"],
    ["plugin/transport/ib"],
    ["plugin/fault"],
    ["plugin/report"],
    ["plugin/trace"],
    ["plugin/wrap", "plugin/profiler"],
    ["plugin/entry"],
]
FLOOR = {folder: n for n, floor in enumerate(FLOORS) for folder in floor}
# The tools use the plugin's layers below the wrap (never its objects) and the shim.
PLUGIN_BELOW_WRAP = ["plugin/base", "plugin/stats", "plugin/verdict", "plugin/port",
                     "plugin/transport", "plugin/transport/socket", "plugin/transport/ib",
                     "plugin/fault", "plugin/report"]
TOOL_COMMON = ["tools/common", "shim", "plugin/abi"] + PLUGIN_BELOW_WRAP
ALLOWED.update({
    "tools/common": ["shim", "plugin/base"],
    # a fabric's wiring for the report: the emulated fabric's description model (fabric/topo)
    "tools/topology": ["fabric/topo"] + TOOL_COMMON,
    "tools/report": ["tools/topology"] + TOOL_COMMON,
    "tools/trace": ["tools/report"] + TOOL_COMMON,
    "tools/bench": TOOL_COMMON,
    "tools/sweep": TOOL_COMMON,
    "tools/nccllog": TOOL_COMMON,
    # the doctor loads a wrapped plugin as the ext transport does, to say what it advertises
    "tools/doctor": ["plugin/transport/ext", "plugin/host"] + TOOL_COMMON,
    "tools/lab": ["tools/report", "tools/bench", "fabric/topo"] + TOOL_COMMON,
    "tools": ["tools/report", "tools/trace", "tools/bench", "tools/doctor", "tools/lab",
              "tools/sweep", "tools/nccllog"]
             + TOOL_COMMON,
})
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Where the compiler looks after the including file's folder (the Makefile's -I. -Iplugin).
SEARCH = [".", "plugin"]


def resolve(root, src, name):
    for base in [os.path.dirname(src)] + SEARCH:
        path = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, path)):
            return path
    return None


def sources(root):
    for top in ("plugin", "tools", "shim"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def check(root):
    problems = []
    folders = set()
    for src in sources(root):
        here = os.path.dirname(src)
        folders.add(here)
        if here not in ALLOWED:
            problems.append(f"{src}: folder {here} has no entry in scripts/check_layers.py")
            continue
        with open(os.path.join(root, src), encoding="utf-8") as f:
            text = f.read()
        for name in INCLUDE.findall(text):
            target = resolve(root, src, name)
            if target is None:
                problems.append(f'{src}: #include "{name}" not found')
                continue
            there = os.path.dirname(target)
            if there != here and there not in ALLOWED[here]:
                problems.append(f'{src}: #include "{name}": {here} may not use {there} '
                                f"(allowed: {', '.join(ALLOWED[here]) or 'nothing'})")
    for folder in sorted(folders):
        if not os.path.isfile(os.path.join(root, folder, "README.md")):
            problems.append(f"{folder}: no README.md saying what it owns and may include")
    return problems


def upward_rules():
    """Rules of plugin/ that let a folder include one on its own floor or above."""
    problems = []
    for folder, deps in ALLOWED.items():
        if not folder.startswith("plugin/"):
            continue
        if folder not in FLOOR:
            problems.append(f"scripts/check_layers.py: {folder} is on no floor (FLOORS)")
            continue
        for dep in deps:
            if dep.startswith("plugin/") and FLOOR.get(dep, len(FLOORS)) >= FLOOR[folder]:
                problems.append(f"scripts/check_layers.py: {folder} may use {dep}, which is "
                                f"not on a floor below it: the include would run back up")
    return problems


def rule_cycle():
    """A folder that reaches itself through the rules, or None: the rules must form a DAG."""
    state = {}

    def visit(folder, path):
        if state.get(folder) == "open":
            return path[path.index(folder):] + [folder]
        if state.get(folder) == "done":
            return None
        state[folder] = "open"
        for dep in ALLOWED.get(folder, []):
            found = visit(dep, path + [folder])
            if found:
                return found
        state[folder] = "done"
        return None

    for folder in ALLOWED:
        found = visit(folder, [])
        if found:
            return found
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    problems = check(root)
    problems += upward_rules()
    cycle = rule_cycle()
    if cycle:
        problems.append("scripts/check_layers.py: the rules go round: " + " -> ".join(cycle))
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} problem(s)")
        return 1
    print("check_layers: includes run one way")
    return 0


if __name__ == "__main__":
    sys.exit(main())
