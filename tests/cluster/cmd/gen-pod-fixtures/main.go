// gen-pod-fixtures writes pods encoded by k8s.io/api's own JSON and protobuf codecs (client-go's
// scheme) into kube/tests/fixtures/proto, for the differential tests of kube/tests/test-proto.c:
//   - pod-affinity.{json,pb}: one Pod with a required node affinity (the DaemonSet controller's
//     target node, kube_pod affinity_node);
//   - pod-volumes.{json,pb}: one Pod with a generic ephemeral volume among others and a resource
//     claim (kube_pod has_ephemeral_volume, has_resource_claims: the ephemeral-volume and
//     resourceclaim controllers queue only such pods).
//
// Run from tests/cluster:
//
//	go run ./cmd/gen-pod-fixtures ../../kube/tests/fixtures/proto
package main

import (
	"bytes"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
)

func affinityPod() *v1.Pod {
	req := func(k, op string, vals ...string) v1.NodeSelectorRequirement {
		return v1.NodeSelectorRequirement{Key: k, Operator: v1.NodeSelectorOperator(op), Values: vals}
	}
	return &v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "ds-abcde", Namespace: "ns", UID: "00000000-0000-0000-0000-0000000000d5", ResourceVersion: "42"},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "c", Image: "i"}},
			Affinity: &v1.Affinity{
				NodeAffinity: &v1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
						NodeSelectorTerms: []v1.NodeSelectorTerm{
							{MatchExpressions: []v1.NodeSelectorRequirement{req("metadata.name", "In", "not-a-field")}},
							{MatchFields: []v1.NodeSelectorRequirement{req("metadata.name", "NotIn", "other"), req("spec.x", "In", "y")},
								MatchExpressions: []v1.NodeSelectorRequirement{req("zone", "Exists")}},
							{MatchFields: []v1.NodeSelectorRequirement{req("metadata.name", "In", "node-7")}},
							{MatchFields: []v1.NodeSelectorRequirement{req("metadata.name", "In", "later")}},
						},
					},
					PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: 1,
						Preference: v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{req("metadata.name", "In", "preferred")}}}},
				},
			},
		},
	}
}

func volumesPod() *v1.Pod {
	tmpl := "tmpl"
	return &v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "vol", Namespace: "ns", UID: "00000000-0000-0000-0000-0000000000e7", ResourceVersion: "43"},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "c", Image: "i"}},
			Volumes: []v1.Volume{
				{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
				{Name: "data", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
					VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{
						Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}},
					}}}},
			},
			ResourceClaims: []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &tmpl}},
		},
	}
}

func main() {
	codecs := serializer.NewCodecFactory(scheme.Scheme)
	for name, pod := range map[string]*v1.Pod{"pod-affinity": affinityPod(), "pod-volumes": volumesPod()} {
		for _, mt := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
			info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mt)
			var b bytes.Buffer
			if err := info.Serializer.Encode(pod, &b); err != nil {
				panic(err)
			}
			ext := ".json"
			if mt == runtime.ContentTypeProtobuf {
				ext = ".pb"
			}
			if err := os.WriteFile(filepath.Join(os.Args[1], name+ext), b.Bytes(), 0o644); err != nil {
				panic(err)
			}
		}
	}
}
