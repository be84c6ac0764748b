// SPDX-License-Identifier: Apache-2.0

package e2e

// Issue 21: kcmd's Lease renewals belong in the apiserver's leader-election priority level.
// The real v1.37 apiserver tells each client how it classified a request (response headers
// X-Kubernetes-PF-FlowSchema-UID and X-Kubernetes-PF-PriorityLevel-UID); the test reads them
// for the requests a kcmd renewal makes (GET and PUT of a Lease in kube-system):
//   - as system:kube-controller-manager (kcm's identity, which kcmd may run under): the
//     bootstrap FlowSchema system-leader-election, priority level leader-election;
//   - as kcmd's own user without packaging/kcmd-flowschema.yaml: not leader-election (the
//     negative control: the shipped file is needed);
//   - with the file applied: FlowSchema kcmd-leader-election, priority level leader-election,
//     and kcmd's other requests (a pod LIST) in workload-high as kcm's.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// apfClassify sends method path as the user of token and returns the FlowSchema and priority
// level uids the apiserver reports.
func apfClassify(t *testing.T, token, method, path, body string) (fs, pl string) {
	t.Helper()
	ca, err := os.ReadFile(env.Cluster.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	hc := &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	req, err := http.NewRequest(method, env.Cluster.Server+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID"), resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID")
}

func TestAPF_LeaseRenewalsInLeaderElection(t *testing.T) {
	ctx := context.Background()
	fc := env.Client.FlowcontrolV1()
	uidOf := func(kind, name string) types.UID {
		var u types.UID
		Eventually(t, 30*time.Second, kind+" "+name, func() (bool, string) {
			if kind == "pl" {
				o, err := fc.PriorityLevelConfigurations().Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return false, err.Error()
				}
				u = o.UID
			} else {
				o, err := fc.FlowSchemas().Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return false, err.Error()
				}
				u = o.UID
			}
			return true, ""
		})
		return u
	}
	leaderPL, highPL := uidOf("pl", "leader-election"), uidOf("pl", "workload-high")
	lease := "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/apf-probe"
	put := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"apf-probe","namespace":"kube-system"}}`

	// kcm's identity: the bootstrap configuration already does it
	kcm := env.Cluster.Tokens["system:kube-controller-manager"]
	sysLE := uidOf("fs", "system-leader-election")
	for _, m := range []string{"GET", "PUT"} {
		fs, pl := apfClassify(t, kcm, m, lease, put)
		if fs != string(sysLE) || pl != string(leaderPL) {
			t.Errorf("%s Lease as system:kube-controller-manager: FlowSchema %s, priority level %s; want system-leader-election %s, leader-election %s",
				m, fs, pl, sysLE, leaderPL)
		}
	}

	// kcmd's own user, before the shipped FlowSchemas: not leader-election
	kcmd := env.Cluster.Tokens["kcmd"]
	if _, pl := apfClassify(t, kcmd, "PUT", lease, put); pl == string(leaderPL) {
		t.Fatalf("negative control: a Lease PUT as user kcmd is in leader-election without the shipped FlowSchema")
	}

	// apply packaging/kcmd-flowschema.yaml
	f, err := os.Open("../../../packaging/kcmd-flowschema.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	names := map[string]types.UID{}
	for {
		var fs flowcontrolv1.FlowSchema
		if err := dec.Decode(&fs); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		if fs.Name == "" {
			continue
		}
		got, err := fc.FlowSchemas().Create(ctx, &fs, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating FlowSchema %s from the shipped file: %v", fs.Name, err)
		}
		name := got.Name
		t.Cleanup(func() { _ = fc.FlowSchemas().Delete(context.Background(), name, metav1.DeleteOptions{}) })
		names[got.Name] = got.UID
	}
	if names["kcmd-leader-election"] == "" || names["kcmd"] == "" {
		t.Fatalf("the shipped file holds FlowSchemas %v, want kcmd-leader-election and kcmd", names)
	}
	// the apiserver's config controller picks the new FlowSchemas up asynchronously
	for _, m := range []string{"GET", "PUT"} {
		Eventually(t, 30*time.Second, m+" Lease as kcmd in leader-election", func() (bool, string) {
			fs, pl := apfClassify(t, kcmd, m, lease, put)
			return fs == string(names["kcmd-leader-election"]) && pl == string(leaderPL),
				fmt.Sprintf("FlowSchema %s, priority level %s", fs, pl)
		})
	}
	fs, pl := apfClassify(t, kcmd, "GET", "/api/v1/pods?limit=1", "")
	if fs != string(names["kcmd"]) || pl != string(highPL) {
		t.Errorf("a pod LIST as kcmd: FlowSchema %s, priority level %s; want kcmd %s, workload-high %s", fs, pl, names["kcmd"], highPL)
	}
	t.Logf("Lease GET/PUT as kcmd: FlowSchema kcmd-leader-election → leader-election; as system:kube-controller-manager: system-leader-election → leader-election")
}
