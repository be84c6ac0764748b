#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generates kube/proto-schema.c: the field tables kube/proto-encode.c uses to write a JSON
object of a built-in type as Kubernetes' protobuf (the JSON -> protobuf transcoder).

Input: the generated.proto files of k8s.io/api and k8s.io/apimachinery (field names, numbers,
types) and their types.go (which fields Go's encoding/json inlines: `json:""` / `json:",inline"`).
Only the messages reachable from the roots below are emitted.

    python3 tools/gen-proto-schema.py ~/go/pkg/mod/k8s.io |
        clang-format --assume-filename=kube/proto-schema.c > kube/proto-schema.c
"""
import os
import re
import sys

# (message, C name of its index: kube_pb_msg_<name>)
ROOTS = [
    ("k8s.io.api.core.v1.Pod", "Pod"),
    ("k8s.io.api.apps.v1.ReplicaSetStatus", "ReplicaSetStatus"),
    ("k8s.io.api.coordination.v1.Lease", "Lease"),
    ("k8s.io.api.core.v1.Event", "Event"),
    ("k8s.io.api.core.v1.Endpoints", "Endpoints"),
    ("k8s.io.api.discovery.v1.EndpointSlice", "EndpointSlice"),
    ("k8s.io.api.apps.v1.ReplicaSet", "ReplicaSet"),
    ("k8s.io.api.batch.v1.Job", "Job"),
    # every other built-in kind kcmd creates or updates (docs/kube.md lists who writes which)
    ("k8s.io.api.core.v1.Node", "Node"),
    ("k8s.io.api.core.v1.Namespace", "Namespace"),
    ("k8s.io.api.core.v1.ServiceAccount", "ServiceAccount"),
    ("k8s.io.api.core.v1.Secret", "Secret"),
    ("k8s.io.api.core.v1.ConfigMap", "ConfigMap"),
    ("k8s.io.api.core.v1.PersistentVolume", "PersistentVolume"),
    ("k8s.io.api.core.v1.PersistentVolumeClaim", "PersistentVolumeClaim"),
    ("k8s.io.api.core.v1.ResourceQuota", "ResourceQuota"),
    ("k8s.io.api.core.v1.ReplicationController", "ReplicationController"),
    ("k8s.io.api.apps.v1.Deployment", "Deployment"),
    ("k8s.io.api.apps.v1.StatefulSet", "StatefulSet"),
    ("k8s.io.api.apps.v1.DaemonSet", "DaemonSet"),
    ("k8s.io.api.apps.v1.ControllerRevision", "ControllerRevision"),
    ("k8s.io.api.batch.v1.CronJob", "CronJob"),
    ("k8s.io.api.policy.v1.PodDisruptionBudget", "PodDisruptionBudget"),
    ("k8s.io.api.autoscaling.v2.HorizontalPodAutoscaler", "HorizontalPodAutoscaler"),
    ("k8s.io.api.certificates.v1.CertificateSigningRequest", "CertificateSigningRequest"),
    ("k8s.io.api.certificates.v1.ClusterTrustBundle", "ClusterTrustBundle"),
    ("k8s.io.api.authorization.v1.SubjectAccessReview", "SubjectAccessReview"),
    ("k8s.io.api.authentication.v1.TokenReview", "TokenReview"),
    ("k8s.io.api.storage.v1.VolumeAttachment", "VolumeAttachment"),
    ("k8s.io.api.storage.v1.VolumeAttributesClass", "VolumeAttributesClass"),
    ("k8s.io.api.resource.v1.ResourceClaim", "ResourceClaim"),
    ("k8s.io.api.resource.v1alpha3.ResourcePoolStatusRequest", "ResourcePoolStatusRequest"),
    ("k8s.io.api.scheduling.v1beta1.PodGroup", "PodGroup"),
    ("k8s.io.api.apiserverinternal.v1alpha1.StorageVersion", "StorageVersion"),
    ("k8s.io.api.storagemigration.v1.StorageVersionMigration", "StorageVersionMigration"),
]
FILES = [  # (generated.proto, types.go) relative to the k8s.io module directory
    ("api@v0.37.2/core/v1/generated.proto", "api@v0.37.2/core/v1/types.go"),
    ("api@v0.37.2/apps/v1/generated.proto", "api@v0.37.2/apps/v1/types.go"),
    ("api@v0.37.2/coordination/v1/generated.proto", "api@v0.37.2/coordination/v1/types.go"),
    ("api@v0.37.2/discovery/v1/generated.proto", "api@v0.37.2/discovery/v1/types.go"),
    ("api@v0.37.2/batch/v1/generated.proto", "api@v0.37.2/batch/v1/types.go"),
    ("api@v0.37.2/scheduling/v1alpha3/generated.proto",
     "api@v0.37.2/scheduling/v1alpha3/types.go"),
    ("api@v0.37.2/policy/v1/generated.proto", "api@v0.37.2/policy/v1/types.go"),
    ("api@v0.37.2/autoscaling/v2/generated.proto", "api@v0.37.2/autoscaling/v2/types.go"),
    ("api@v0.37.2/certificates/v1/generated.proto", "api@v0.37.2/certificates/v1/types.go"),
    ("api@v0.37.2/authorization/v1/generated.proto", "api@v0.37.2/authorization/v1/types.go"),
    ("api@v0.37.2/authentication/v1/generated.proto", "api@v0.37.2/authentication/v1/types.go"),
    ("api@v0.37.2/storage/v1/generated.proto", "api@v0.37.2/storage/v1/types.go"),
    ("api@v0.37.2/resource/v1/generated.proto", "api@v0.37.2/resource/v1/types.go"),
    ("api@v0.37.2/resource/v1alpha3/generated.proto", "api@v0.37.2/resource/v1alpha3/types.go"),
    ("api@v0.37.2/scheduling/v1beta1/generated.proto", "api@v0.37.2/scheduling/v1beta1/types.go"),
    ("api@v0.37.2/apiserverinternal/v1alpha1/generated.proto", "api@v0.37.2/apiserverinternal/v1alpha1/types.go"),
    ("api@v0.37.2/storagemigration/v1/generated.proto", "api@v0.37.2/storagemigration/v1/types.go"),
    ("apimachinery@v0.37.2/pkg/apis/meta/v1/generated.proto",
     "apimachinery@v0.37.2/pkg/apis/meta/v1/types.go"),
    ("apimachinery@v0.37.2/pkg/api/resource/generated.proto", None),
    ("apimachinery@v0.37.2/pkg/util/intstr/generated.proto", None),
    ("apimachinery@v0.37.2/pkg/runtime/generated.proto", None),
]
# messages with their own JSON form (kube/proto-encode.c writes them by hand)
SPECIAL = {
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time": "PBK_TIME",
    "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime": "PBK_MICROTIME",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Duration": "PBK_UNSUPPORTED",
    "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1": "PBK_RAWJSON",
    "k8s.io.apimachinery.pkg.runtime.RawExtension": "PBK_RAWJSON",
    "k8s.io.apimachinery.pkg.api.resource.Quantity": "PBK_QUANTITY",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": "PBK_INTORSTR",
    # Go named slices ([]string) wrapped in a message (+protobuf.nullable=true): a JSON array
    "k8s.io.api.certificates.v1.ExtraValue": "PBK_STRLIST",
    "k8s.io.api.authorization.v1.ExtraValue": "PBK_STRLIST",
    "k8s.io.api.authentication.v1.ExtraValue": "PBK_STRLIST",
    "k8s.io.api.authentication.v1.AttestationValue": "PBK_STRLIST",
}
SCALAR = {"string": "PBK_STRING", "bytes": "PBK_BYTES", "int32": "PBK_INT32",
          "int64": "PBK_INT64", "bool": "PBK_BOOL", "double": "PBK_DOUBLE"}

msgs = {}  # full name -> list of (name, num, type, repeated, mapvalue)


def inline_fields(types_go):
    """(struct, protobuf number) of every field encoding/json inlines."""
    out = set()
    src = open(types_go).read()
    for m in re.finditer(r"^type (\w+) struct \{(.*?)^\}", src, re.S | re.M):
        for t in re.finditer(r"`([^`]*)`", m.group(2)):
            tag = t.group(1)
            pb = re.search(r'protobuf:"[a-z0-9]+,(\d+)', tag)
            js = re.search(r'json:"([^"]*)"', tag)
            if pb and js and js.group(1).split(",")[0] == "":
                out.add((m.group(1), int(pb.group(1))))
    return out


def typemeta_structs(types_go):
    """structs that inline metav1.TypeMeta: their JSON has kind and apiVersion, which protobuf
    does not carry (a nested object, e.g. a StatefulSet's volumeClaimTemplates, as served)"""
    src = open(types_go).read()
    return {m.group(1) for m in re.finditer(r"^type (\w+) struct \{(.*?)^\}", src, re.S | re.M)
            if re.search(r"^\s*metav1\.TypeMeta\s+`json:\"(,inline)?\"", m.group(2), re.M)}


inline = set()
typemeta = set()
for proto, types in FILES:
    root = sys.argv[1]
    src = open(os.path.join(root, proto)).read()
    pkg = re.search(r"^package ([\w.]+);", src, re.M).group(1)
    if types:
        inline |= {(pkg + "." + s, n) for s, n in inline_fields(os.path.join(root, types))}
        typemeta |= {pkg + "." + s for s in typemeta_structs(os.path.join(root, types))}
    for m in re.finditer(r"^message (\w+) \{(.*?)^\}", src, re.S | re.M):
        fields = []
        for f in re.finditer(r"^\s*(optional|repeated|required)?\s*([\w.<>, ]+?)\s+(\w+) = (\d+);",
                             m.group(2), re.M):
            label, typ, name, num = f.groups()
            mapv = None
            mm = re.match(r"map<\s*string,\s*([\w.]+)\s*>", typ)
            if mm:
                mapv = mm.group(1)
                typ = "map"
            fields.append([name, int(num), typ, label == "repeated", mapv, pkg])
        if pkg + "." + m.group(1) in typemeta:  # written as nothing (kube/proto-encode.c)
            fields += [["apiVersion", 0, "typemeta", False, None, pkg],
                       ["kind", 0, "typemeta", False, None, pkg]]
        msgs[pkg + "." + m.group(1)] = fields


def resolve(typ, pkg):
    if typ in SCALAR:
        return typ
    if typ.startswith("."):
        return typ[1:]
    return pkg + "." + typ


order = []
seen = set()


def visit(name):
    if name in seen or name in SPECIAL:
        return
    seen.add(name)
    if name not in msgs:
        sys.exit("unknown message " + name)
    order.append(name)
    for f in msgs[name]:
        for t in (f[2], f[4]):
            if t and t not in ("map", "typemeta"):
                r = resolve(t, f[5])
                if r not in SCALAR:
                    visit(r)


for r, _ in ROOTS:
    visit(r)
index = {n: i for i, n in enumerate(order)}


def kind(t, pkg):
    if t == "typemeta":
        return "PBK_TYPEMETA", -1
    r = resolve(t, pkg)
    if r in SCALAR:
        return SCALAR[r], -1
    if r in SPECIAL:
        return SPECIAL[r], -1
    return "PBK_MESSAGE", index[r]


print("/* SPDX-License-Identifier: Apache-2.0 */")
print("/* kube/proto-schema.c - GENERATED by tools/gen-proto-schema.py from k8s.io/api and")
print(" * k8s.io/apimachinery v0.37.2 (generated.proto + types.go); do not edit. Roots: " +
      ", ".join(c for _, c in ROOTS) + ".")
print(" * One table per message, fields sorted by JSON name (bsearch). */")
print('#include "kube/proto-schema.h"\n')
for name in order:
    fields = sorted(msgs[name], key=lambda f: f[0])
    cname = name.replace(".", "_")
    print("static const struct pb_field f_%s[] = {" % cname)
    for fname, num, typ, rep, mapv, pkg in fields:
        flags = []
        if rep:
            flags.append("PBF_REPEATED")
        if (name, num) in inline:
            flags.append("PBF_INLINE")
        if typ == "map":
            k, m = kind(mapv, pkg)
            flags.append("PBF_MAP")
        else:
            k, m = kind(typ, pkg)
        print('\t{"%s", %d, %d, %s, %s, %d},' % (fname, len(fname), num, k,
                                                 "|".join(flags) or "0", m))
    print("};")
print("\nconst struct pb_msg kube_pb_msgs[] = {")
for name in order:
    cname = name.replace(".", "_")
    print('\t{"%s", f_%s, sizeof(f_%s) / sizeof(f_%s[0])},' % (name.split(".")[-1], cname,
                                                             cname, cname))
print("};")
print("const unsigned kube_pb_n_msgs = %d;" % len(order))
for r, c in ROOTS:
    print("const int kube_pb_msg_%s = %d;" % (c, index[r]))
