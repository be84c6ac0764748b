// SPDX-License-Identifier: Apache-2.0

// reqbench: client-go's CPU per API request, the control beside kube/bench/bench-requests.c
// (issue 20). Same cluster, same requests: N pods created from the ReplicaSet controller's
// template (generateName, an ownerReference) and deleted again (propagationPolicy Background),
// in the shapes of the C benchmark, with client-go configured as kube-controller-manager
// configures its clients (protobuf for built-in types, HTTP/2, one connection per client):
//
//	seq       one request at a time (one goroutine)
//	many      20 goroutines on one clientset, 20 requests in flight (upstream's 20 GC workers)
//
// each with JSON and with protobuf (`_pb`, kcm's --kube-api-content-type default). The client
// rate limiter is off (QPS -1), as in the C benchmark, so the figure is the request path's CPU.
// CPU = user + system of this process (getrusage), so Go's runtime (GC, scheduler), TLS and
// HTTP/2 are in it, as libcurl, GnuTLS and nghttp2 are in the C figure. Prints `bench:` lines
// named like bench-requests' with a `clientgo.` prefix.
//
//	eval $(tests/cluster/cluster env); go run ./cmd/reqbench [-n 1000]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const inflight = 20

func cpuUsec() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec)*1e6 + float64(ru.Utime.Usec+ru.Stime.Usec)
}

func template(ns string) *corev1.Pod {
	yes := true
	grace := int64(30)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "bench-",
			Namespace:    ns,
			Labels:       map[string]string{"app": "bench", "pod-template-hash": "abc"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "bench",
				UID:        "6b1c7d0e-0000-4000-8000-000000000001",
				Controller: &yes, BlockOwnerDeletion: &yes,
			}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "c", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("10m"),
					corev1.ResourceMemory: resource.MustParse("16Mi"),
				}},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullIfNotPresent,
			}},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			DNSPolicy:                     corev1.DNSClusterFirst,
			SecurityContext:               &corev1.PodSecurityContext{},
			SchedulerName:                 "default-scheduler",
		},
	}
}

// run does n calls of op with `workers` goroutines; returns CPU µs per call and calls/s.
func run(n, workers int, op func(i int) error) (float64, float64) {
	c0, w0 := cpuUsec(), time.Now()
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := op(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		fmt.Fprintf(os.Stderr, "reqbench: %v\n", firstErr)
		os.Exit(1)
	}
	return (cpuUsec() - c0) / float64(n), float64(n) / time.Since(w0).Seconds()
}

func main() {
	n := flag.Int("n", 1000, "pods per shape")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "reqbench: kubeconfig: %v (run with the test cluster's env)\n", err)
		os.Exit(77)
	}
	cfg.QPS = -1
	cfg.UserAgent = "reqbench"
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(cfg)
	ns := fmt.Sprintf("bench-req-go-%d", os.Getpid())
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		fmt.Fprintf(os.Stderr, "reqbench: namespace: %v\n", err)
		os.Exit(1)
	}
	defer admin.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})

	bg := metav1.DeletePropagationBackground
	for _, pb := range []bool{false, true} {
		c := *cfg
		suffix := ""
		if pb {
			c.ContentType = "application/vnd.kubernetes.protobuf"
			c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
			suffix = "_pb"
		}
		cs := kubernetes.NewForConfigOrDie(&c) // one client, one HTTP/2 connection
		pods := cs.CoreV1().Pods(ns)
		names := make([]string, *n)
		create := func(i int) error {
			p, err := pods.Create(ctx, template(ns), metav1.CreateOptions{})
			if err == nil {
				names[i] = p.Name
			}
			return err
		}
		del := func(i int) error {
			return pods.Delete(ctx, names[i], metav1.DeleteOptions{PropagationPolicy: &bg})
		}
		// warm-up: the connection, TLS, the apiserver's caches (as the C benchmark's 40)
		run(40, inflight, create)
		run(40, inflight, del)
		for _, shape := range []struct {
			name    string
			workers int
		}{{"seq", 1}, {"many", inflight}} {
			cu, rate := run(*n, shape.workers, create)
			fmt.Printf("bench: clientgo.req_create_%s%s_cpu_us %.1f us\n", shape.name, suffix, cu)
			fmt.Printf("bench: clientgo.req_create_%s%s_per_s %.0f req/s\n", shape.name, suffix, rate)
			cu, rate = run(*n, shape.workers, del)
			fmt.Printf("bench: clientgo.req_delete_%s%s_cpu_us %.1f us\n", shape.name, suffix, cu)
			fmt.Printf("bench: clientgo.req_delete_%s%s_per_s %.0f req/s\n", shape.name, suffix, rate)
		}
	}
}
