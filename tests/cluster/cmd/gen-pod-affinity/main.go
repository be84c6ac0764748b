// gen-pod-affinity writes kube/tests/fixtures/proto/pod-affinity.{json,pb}: one Pod with a
// required node affinity (the DaemonSet controller's target node, kube_pod affinity_node)
// encoded by k8s.io/api's own JSON and protobuf codecs (client-go's scheme), for the
// differential test of kube/tests/test-proto.c. Run from tests/cluster:
//
//	go run ./cmd/gen-pod-affinity ../../kube/tests/fixtures/proto/pod-affinity
package main

import (
	"bytes"
	"os"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
)

func main() {
	req := func(k, op string, vals ...string) v1.NodeSelectorRequirement {
		return v1.NodeSelectorRequirement{Key: k, Operator: v1.NodeSelectorOperator(op), Values: vals}
	}
	pod := &v1.Pod{
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
	codecs := serializer.NewCodecFactory(scheme.Scheme)
	for _, mt := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mt)
		var b bytes.Buffer
		if err := info.Serializer.Encode(pod, &b); err != nil {
			panic(err)
		}
		name := os.Args[1] + ".json"
		if mt == runtime.ContentTypeProtobuf {
			name = os.Args[1] + ".pb"
		}
		if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
			panic(err)
		}
	}
}
