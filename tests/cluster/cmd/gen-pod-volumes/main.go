// gen-pod-volumes writes kube/tests/fixtures/proto/pod-volumes.{json,pb}: one Pod with a
// generic ephemeral volume among others and a resource claim (kube_pod has_ephemeral_volume,
// has_resource_claims: the ephemeral-volume and resourceclaim controllers queue only such
// pods) encoded by k8s.io/api's own JSON and protobuf codecs (client-go's scheme), for the
// differential test of kube/tests/test-proto.c. Run from tests/cluster:
//
//	go run ./cmd/gen-pod-volumes ../../kube/tests/fixtures/proto/pod-volumes
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
	tmpl := "tmpl"
	pod := &v1.Pod{
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
