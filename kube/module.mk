# kube/: the Kubernetes API client and object model (see docs/kube.md).
LIBS          += kube
kube_SRCS     := kube/json.c kube/time.c kube/decode.c kube/selector.c kube/quantity.c kube/errors.c kube/encode.c kube/watch.c kube/config.c kube/auth.c kube/client.c kube/discovery.c kube/restmetrics.c kube/limiter.c kube/fence.c kube/shard.c kube/proto.c kube/proto-encode.c kube/proto-schema.c kube/deephash.c kube/deephash-schema.c kube/evcorr.c
kube_LIBDEPS  :=
kube_TESTS    := kube/tests/test-decode.c kube/tests/test-selector.c kube/tests/test-quantity.c kube/tests/test-model.c kube/tests/test-encode.c kube/tests/test-watch.c kube/tests/test-config.c kube/tests/test-auth.c kube/tests/test-client.c kube/tests/test-discovery.c kube/tests/test-restmetrics.c kube/tests/test-limiter.c kube/tests/test-fence.c kube/tests/test-shard.c kube/tests/test-tls.c kube/tests/test-captured.c kube/tests/test-proto.c kube/tests/test-deephash.c kube/tests/test-evcorr.c kube/tests/e2e-kube.c
kube_BENCHES  := kube/bench/bench-kube.c kube/bench/bench-proto.c kube/bench/bench-requests.c kube/bench/bench-proto-encode.c
kube_FUZZ     := kube/fuzz/fuzz-decode.c kube/fuzz/fuzz-selector.c kube/fuzz/fuzz-watch.c kube/fuzz/fuzz-kubeconfig.c kube/fuzz/fuzz-proto.c kube/fuzz/fuzz-proto-encode.c kube/fuzz/fuzz-deephash.c
