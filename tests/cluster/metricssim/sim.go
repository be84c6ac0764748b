// Package metricssim is a small resource metrics API (metrics.k8s.io/v1beta1 PodMetrics) for
// kcmd's HPA tests: an HTTPS server with a self-signed certificate that serves the values the
// test sets, to be registered with the cluster's kube-apiserver as an APIService (a real
// aggregated API: the controller under test reaches it through the apiserver's aggregator).
// It serves the group-version's discovery document and the namespaced pods list (label
// selector honoured); anything else is 404.
package metricssim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
)

// Pod is one pod's sample: CPU in milli-cores (every container the same), taken Age ago.
type Pod struct {
	Namespace, Name string
	Labels          map[string]string
	Containers      []string
	CPUMilli        int64
	Window          time.Duration
}

// Server is a running simulator.
type Server struct {
	mu       sync.Mutex
	pods     map[string]Pod // ns/name
	ln       net.Listener
	srv      *http.Server
	Requests int
}

// Start listens on 127.0.0.1 (a free port) and serves until Close.
func Start() (*Server, error) {
	cert, err := selfSigned()
	if err != nil {
		return nil, err
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		return nil, err
	}
	s := &Server{pods: map[string]Pod{}, ln: ln}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Port is the port it listens on.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Close stops serving (the aggregated API is then down).
func (s *Server) Close() { _ = s.srv.Close() }

// Set replaces the sample of one pod.
func (s *Server) Set(p Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.Window == 0 {
		p.Window = 30 * time.Second
	}
	if len(p.Containers) == 0 {
		p.Containers = []string{"c"}
	}
	s.pods[p.Namespace+"/"+p.Name] = p
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	const base = "/apis/metrics.k8s.io/v1beta1"
	s.mu.Lock()
	s.Requests++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == base || r.URL.Path == base+"/" {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "metrics.k8s.io/v1beta1",
			"resources": []map[string]any{
				{"name": "pods", "singularName": "", "namespaced": true, "kind": "PodMetrics", "verbs": []string{"get", "list"}},
			},
		})
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, base+"/"), "/")
	if !strings.HasPrefix(r.URL.Path, base+"/") || len(parts) != 3 || parts[0] != "namespaces" || parts[2] != "pods" {
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure",
			"message": "the server could not find the requested resource", "reason": "NotFound", "code": 404})
		return
	}
	sel, err := labels.Parse(r.URL.Query().Get("labelSelector"))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	now := time.Now().UTC().Truncate(time.Second)
	items := []map[string]any{}
	s.mu.Lock()
	for _, p := range s.pods {
		if p.Namespace != parts[1] || !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		cs := []map[string]any{}
		for _, c := range p.Containers {
			cs = append(cs, map[string]any{"name": c, "usage": map[string]string{
				"cpu": big.NewInt(p.CPUMilli).String() + "m", "memory": "10Mi"}})
		}
		items = append(items, map[string]any{
			"metadata":   map[string]any{"name": p.Name, "namespace": p.Namespace, "labels": p.Labels, "creationTimestamp": now.Format(time.RFC3339)},
			"timestamp":  now.Format(time.RFC3339),
			"window":     p.Window.String(),
			"containers": cs,
		})
	}
	s.mu.Unlock()
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1",
		"metadata": map[string]any{}, "items": items})
}

func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "metrics-server-sim"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
