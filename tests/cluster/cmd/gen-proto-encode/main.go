// gen-proto-encode writes kube/tests/fixtures/proto/encode-NAME.pb for each
// encode-NAME.json named on the command line: the JSON decoded by client-go's strict JSON
// serializer into its typed object and written by its protobuf serializer, which is what a
// client-go client on application/vnd.kubernetes.protobuf sends. kube/tests/test-proto.c
// compares kcmd's JSON -> protobuf transcoder with these, field by field. Run from
// tests/cluster:
//
//	go run ./cmd/gen-proto-encode ../../kube/tests/fixtures/proto/encode-deployment.json ...
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

func main() {
	strict := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
		json.SerializerOptions{Strict: true})
	pb := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	for _, in := range os.Args[1:] {
		data, err := os.ReadFile(in)
		if err != nil {
			fail(err)
		}
		obj, gvk, err := strict.Decode(data, nil, nil)
		if err != nil {
			fail(fmt.Errorf("%s: %w", in, err))
		}
		obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind(*gvk))
		var out bytes.Buffer
		if err := pb.Encode(obj, &out); err != nil {
			fail(fmt.Errorf("%s: %w", in, err))
		}
		if err := os.WriteFile(strings.TrimSuffix(in, ".json")+".pb", out.Bytes(), 0o644); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen-proto-encode:", err)
	os.Exit(1)
}
