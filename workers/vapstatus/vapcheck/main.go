// SPDX-License-Identifier: Apache-2.0

// kcmd-vapcheck: the CEL type checker of kcm's validatingadmissionpolicy-status-controller, run
// as a child of that controller's kcmd worker (workers/vapstatus, docs/vapstatus.md).
//
// It links the apiserver's own type checker (k8s.io/apiserver's validating admission policy
// plugin, over cel-go) with the schema resolution kcm gives it: the built-in types' OpenAPI
// definitions compiled in, and the apiserver's /openapi/v3 for the rest (CRDs), through a
// discovery-backed REST mapper reset every 30 s as kcm's. There is no C implementation of CEL
// (docs/dependencies.md says why this is Go).
//
// Protocol (stdin/stdout, one JSON document a line, answers in order):
//
//	in:  a ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1)
//	out: {"warnings":[{"fieldRef":"...","warning":"..."}, ...]} or {"error":"..."}
//
// It exits when stdin closes. Credentials: --kubeconfig (written by the worker from its own
// client's configuration).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsscheme "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/scheme"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	k8sscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubernetes/pkg/generated/openapi"
)

type answer struct {
	Warnings []admissionregistrationv1.ExpressionWarning `json:"warnings"`
	Error    string                                      `json:"error,omitempty"`
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the apiserver to resolve schemas from")
	userAgent := flag.String("user-agent", "kcmd-vapcheck", "User-Agent of its requests")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kcmd-vapcheck: %v\n", err)
		os.Exit(2)
	}
	cfg.UserAgent = *userAgent
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kcmd-vapcheck: %v\n", err)
		os.Exit(2)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	checker := &validating.TypeChecker{
		SchemaResolver: resolver.NewDefinitionsSchemaResolver(openapi.GetOpenAPIDefinitions, k8sscheme.Scheme,
			apiextensionsscheme.Scheme).Combine(&resolver.ClientDiscoveryResolver{Discovery: dc}),
		RestMapper: mapper,
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	reset := time.Now()
	for in.Scan() {
		// kcm resets its discovery REST mapper every 30 s
		if time.Since(reset) > 30*time.Second {
			mapper.Reset()
			reset = time.Now()
		}
		var a answer
		var p admissionregistrationv1.ValidatingAdmissionPolicy
		if err := json.Unmarshal(in.Bytes(), &p); err != nil {
			a.Error = "decoding the policy: " + err.Error()
		} else {
			a.Warnings = checker.Check(&p)
		}
		if a.Warnings == nil {
			a.Warnings = []admissionregistrationv1.ExpressionWarning{}
		}
		if err := out.Encode(&a); err != nil {
			os.Exit(1)
		}
	}
}
