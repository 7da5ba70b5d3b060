#!/usr/bin/python3
"""Validates Kubernetes manifests offline: every YAML document against its kind's schema.

Core kinds (Job, PersistentVolumeClaim, ...) are checked against the Kubernetes OpenAPI document
that Debian ships (golang-k8s-kube-openapi-dev; Kubernetes 1.13) with deploy/schemas/'s overlay of
the enums and patterns it does not state, JobSet, PyTorchJob and MPIJob against the CRD
schemas in deploy/schemas/, which refer to the core types in it. Like kubeconform's strict mode,
an object may hold only the fields its schema names, so a misspelled field fails. A document
whose apiVersion/kind has no schema fails too. Prints one line per document; exits 1 on any
failure. Usage: validate_manifests.py [--kubernetes FILE] [--schemas DIR] FILE-or-DIR...
"""
import argparse
import copy
import json
import os
import sys
from urllib.parse import unquote

import jsonschema
import yaml

DEBIAN_OPENAPI = ("/usr/share/gocode/src/k8s.io/kube-openapi/pkg/schemaconv/testdata/"
                  "swagger.json")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA_BASE = "file:///fabriclab-schemas/"
# What the API server enforces that the 1.13 OpenAPI document does not say (enums, patterns).
OVERLAY = "kubernetes-overlay.json"


class PointerResolver(jsonschema.RefResolver):
    """Resolves a ref's fragment as a JSON pointer only. These documents have no $id or $anchor,
    and looking for them through the 4 MB OpenAPI document at every ref made a run take minutes."""

    def resolve_fragment(self, document, fragment):
        for part in [p for p in fragment.split("/") if p]:
            try:
                document = document[unquote(part).replace("~1", "/").replace("~0", "~")]
            except (KeyError, TypeError) as e:
                raise jsonschema.RefResolutionError(f"unresolvable pointer {fragment}") from e
        return document


def strict(node):
    """Every object schema that names its fields allows no others (the API server drops them)."""
    if isinstance(node, dict):
        if "properties" in node and "additionalProperties" not in node and "$ref" not in node:
            node["additionalProperties"] = False
        for value in node.values():
            strict(value)
    elif isinstance(node, list):
        for value in node:
            strict(value)


def merge(into, overlay):
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = value


def kubernetes_document(path, overlay_path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    with open(overlay_path, encoding="utf-8") as f:
        merge(doc, {k: v for k, v in json.load(f).items() if k != "$comment"})
    defs = doc["definitions"]
    # YAML writes quantities and int-or-strings as numbers too (cpu: 1, port: 8080); the API
    # accepts both, the OpenAPI document says only string.
    defs["io.k8s.apimachinery.pkg.api.resource.Quantity"] = {"type": ["string", "number"]}
    defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] = {"type": ["string", "integer"]}
    strict(defs)
    return doc


def load_schemas(kubernetes_path, schema_dir):
    """{(apiVersion, kind): schema}, and the store that resolves refs between the documents."""
    core = kubernetes_document(kubernetes_path, os.path.join(schema_dir, OVERLAY))
    store = {SCHEMA_BASE + "kubernetes.json": core}
    kinds = {}
    for name, definition in core["definitions"].items():
        for gvk in definition.get("x-kubernetes-group-version-kind", []):
            api = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
            # apiVersion and kind are optional in the API's types; a manifest needs them.
            schema = {"allOf": [{"$ref": f"kubernetes.json#/definitions/{name}"}],
                      "required": ["apiVersion", "kind", "metadata"],
                      "properties": {"apiVersion": {"const": api}, "kind": {"const": gvk["kind"]}}}
            kinds[(api, gvk["kind"])] = schema
    for entry in sorted(os.listdir(schema_dir)):
        if not entry.endswith(".json") or entry == OVERLAY:
            continue
        with open(os.path.join(schema_dir, entry), encoding="utf-8") as f:
            schema = json.load(f)
        store[SCHEMA_BASE + entry] = schema
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            kinds[(f"{gvk['group']}/{gvk['version']}", gvk["kind"])] = {"$ref": entry}
    return kinds, store


def manifests(paths):
    for path in paths:
        if os.path.isdir(path):
            for dirpath, _, files in sorted(os.walk(path)):
                for f in sorted(files):
                    if f.endswith((".yaml", ".yml")):
                        yield os.path.join(dirpath, f)
        else:
            yield path


def error_text(error):
    where = "/".join(str(p) for p in error.absolute_path) or "(top)"
    # Inside allOf/oneOf the first error is vague; the deepest one names the field.
    deepest = max([error] + list(error.context or []), key=lambda e: len(e.absolute_path))
    if deepest is not error:
        where = "/".join(str(p) for p in deepest.absolute_path) or where
        return f"{where}: {deepest.message}"
    return f"{where}: {error.message}"


def validate_file(path, kinds, store):
    failures = 0
    try:
        with open(path, encoding="utf-8") as f:
            docs = [d for d in yaml.safe_load_all(f) if d is not None]
    except (OSError, yaml.YAMLError) as e:
        print(f"FAIL {path}: does not parse: {e}")
        return 1
    if not docs:
        print(f"FAIL {path}: no YAML document")
        return 1
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict):
            print(f"FAIL {path} [{i}]: not a mapping")
            failures += 1
            continue
        api, kind = doc.get("apiVersion"), doc.get("kind")
        name = (doc.get("metadata") or {}).get("name", "?")
        label = f"{path} [{i}] {kind}/{name}"
        schema = kinds.get((api, kind))
        if schema is None:
            print(f"FAIL {label}: no schema for apiVersion {api!r} kind {kind!r}")
            failures += 1
            continue
        resolver = PointerResolver(SCHEMA_BASE + "manifest", schema, store=store)
        validator = jsonschema.Draft7Validator(copy.deepcopy(schema), resolver=resolver)
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        if errors:
            failures += 1
            for e in errors[:5]:
                print(f"FAIL {label}: {error_text(e)}")
        else:
            print(f"ok   {label}")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kubernetes", default=DEBIAN_OPENAPI,
                        help="the Kubernetes OpenAPI (swagger 2.0) document")
    parser.add_argument("--schemas", default=os.path.join(ROOT, "deploy", "schemas"),
                        help="folder of CRD schemas")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    if not os.path.isfile(args.kubernetes):
        print(f"FAIL no Kubernetes OpenAPI document at {args.kubernetes} "
              "(scripts/deps.sh installs golang-k8s-kube-openapi-dev)")
        return 2
    kinds, store = load_schemas(args.kubernetes, args.schemas)
    failures = sum(validate_file(p, kinds, store) for p in manifests(args.paths))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
