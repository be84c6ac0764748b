// Package harness runs a real Kubernetes control plane (etcd, kube-apiserver and, on request,
// upstream kube-controller-manager) as child processes on 127.0.0.1 for kcmd's tests and
// benchmarks. It uses only the Go standard library so the launcher builds in seconds once the
// control-plane binaries exist (tests/cluster/build.sh builds those).
//
// Layout of a cluster's work directory:
//
//	pki/        ca.crt ca.key apiserver.{crt,key} admin.{crt,key} sa.key sa.pub tokens.csv
//	etcd/       etcd data
//	logs/       etcd.log kube-apiserver.log kube-controller-manager.log
//	kubeconfig  admin (system:masters) bearer token
//	kubeconfig-<identity>   one per extra identity (bearer token)
//	kubeconfig-cert         admin via client certificate
//	state.json  what `cluster down` needs to find the processes again
package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Identity is a user the apiserver knows through the static token file.
type Identity struct {
	Name   string   // user name, e.g. "system:kube-controller-manager"
	Groups []string // e.g. {"system:masters"}
	File   string   // kubeconfig file name suffix; "" derives one from Name
}

// DefaultIdentities are the users every cluster gets besides the admin: the identity upstream
// kube-controller-manager runs as (bound by the bootstrap RBAC policy) and kcmd's own.
var DefaultIdentities = []Identity{
	{Name: "system:kube-controller-manager", File: "kcm"},
	{Name: "kcmd", Groups: []string{"kcmd:controller-managers"}, File: "kcmd"},
}

// KCMOptions configures upstream kube-controller-manager.
type KCMOptions struct {
	Controllers string  // --controllers, e.g. "replicaset-controller"
	QPS         float64 // --kube-api-qps (0 = upstream default)
	Burst       int     // --kube-api-burst (0 = upstream default)
	ExtraFlags  []string
	// MetricsPort > 0 serves /metrics and /healthz on 127.0.0.1:MetricsPort without authn.
	MetricsPort int
}

// Options configures a cluster.
type Options struct {
	BinDir  string // directory with etcd, kube-apiserver, kube-controller-manager
	WorkDir string // "" = a new temporary directory, removed by Stop
	// CompactionInterval is the apiserver's --etcd-compaction-interval; short values provoke
	// 410 Gone on watches that resume from old resourceVersions. 0 keeps the default (5m).
	CompactionInterval  time.Duration
	ExtraAPIServerFlags []string
	Identities          []Identity // nil = DefaultIdentities
	KCM                 *KCMOptions
	// Detach starts the processes in their own sessions so they outlive this process (the
	// `cluster up` command). Otherwise they get SIGKILL when this process dies.
	Detach bool
	// Log receives progress lines; nil = discard.
	Log io.Writer
}

type proc struct {
	Name string   `json:"name"`
	Pid  int      `json:"pid"`
	Args []string `json:"args"`
	cmd  *exec.Cmd
	done chan struct{}
}

// Cluster is a running control plane.
type Cluster struct {
	Dir         string            `json:"dir"`
	Server      string            `json:"server"`
	EtcdURL     string            `json:"etcdURL"`
	Kubeconfig  string            `json:"kubeconfig"`
	CAFile      string            `json:"caFile"`
	AdminToken  string            `json:"adminToken"`
	Tokens      map[string]string `json:"tokens"`      // identity name → token
	Kubeconfigs map[string]string `json:"kubeconfigs"` // identity name → kubeconfig path
	Procs       map[string]*proc  `json:"procs"`
	OwnDir      bool              `json:"ownDir"`

	opts     Options
	apiArgs  []string
	etcdArgs []string
}

func (c *Cluster) logf(format string, a ...any) {
	if c.opts.Log != nil {
		fmt.Fprintf(c.opts.Log, "cluster: "+format+"\n", a...)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start brings up etcd and kube-apiserver (and kube-controller-manager when asked), waits for
// /readyz, and writes the kubeconfigs. On error everything started so far is stopped.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if opts.BinDir == "" {
		return nil, errors.New("harness: Options.BinDir is empty (run tests/cluster/build.sh)")
	}
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(opts.BinDir, b)); err != nil {
			return nil, fmt.Errorf("harness: %s missing in %s: %w", b, opts.BinDir, err)
		}
	}
	c = &Cluster{opts: opts, Procs: map[string]*proc{}, Tokens: map[string]string{}, Kubeconfigs: map[string]string{}}
	if opts.WorkDir == "" {
		if c.Dir, err = os.MkdirTemp("", "kcmd-cluster-"); err != nil {
			return nil, err
		}
		c.OwnDir = true
	} else {
		c.Dir = opts.WorkDir
		if err = os.MkdirAll(c.Dir, 0o700); err != nil {
			return nil, err
		}
	}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	for _, d := range []string{"pki", "etcd", "logs"} {
		if err = os.MkdirAll(filepath.Join(c.Dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	if err = c.writePKI(); err != nil {
		return nil, fmt.Errorf("harness: generating keys: %w", err)
	}
	if err = c.startEtcd(ctx); err != nil {
		return nil, err
	}
	if err = c.startAPIServer(ctx); err != nil {
		return nil, err
	}
	if opts.KCM != nil {
		if err = c.StartKCM(ctx, *opts.KCM); err != nil {
			return nil, err
		}
	}
	return c, c.saveState()
}

func (c *Cluster) pki(name string) string { return filepath.Join(c.Dir, "pki", name) }

func (c *Cluster) writePKI() error {
	ca, err := makeCA(filepath.Join(c.Dir, "pki"))
	if err != nil {
		return err
	}
	if err := ca.issue(filepath.Join(c.Dir, "pki"), "apiserver", "kube-apiserver", nil, true); err != nil {
		return err
	}
	if err := ca.issue(filepath.Join(c.Dir, "pki"), "admin", "kcmd-admin", []string{"system:masters"}, false); err != nil {
		return err
	}
	if err := makeSAKey(filepath.Join(c.Dir, "pki")); err != nil {
		return err
	}
	c.CAFile = c.pki("ca.crt")
	c.AdminToken = randomToken()
	var b strings.Builder
	fmt.Fprintf(&b, "%s,kcmd-admin,uid-kcmd-admin,\"system:masters\"\n", c.AdminToken)
	ids := c.opts.Identities
	if ids == nil {
		ids = DefaultIdentities
	}
	for i, id := range ids {
		tok := randomToken()
		c.Tokens[id.Name] = tok
		fmt.Fprintf(&b, "%s,%s,uid-%d", tok, id.Name, i)
		if len(id.Groups) > 0 {
			fmt.Fprintf(&b, ",\"%s\"", strings.Join(id.Groups, ","))
		}
		b.WriteString("\n")
	}
	return os.WriteFile(c.pki("tokens.csv"), []byte(b.String()), 0o600)
}

func (c *Cluster) spawn(name string, args []string) (*proc, error) {
	bin := filepath.Join(c.opts.BinDir, name)
	logf, err := os.OpenFile(filepath.Join(c.Dir, "logs", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "==== %s start %s\n", time.Now().Format(time.RFC3339), strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = c.Dir
	if c.opts.Detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("harness: starting %s: %w", name, err)
	}
	p := &proc{Name: name, Pid: cmd.Process.Pid, Args: args, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	c.Procs[name] = p
	c.logf("started %s (pid %d), log %s", name, p.Pid, logf.Name())
	return p, nil
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	if c.etcdArgs == nil {
		cport, err := freePort()
		if err != nil {
			return err
		}
		pport, err := freePort()
		if err != nil {
			return err
		}
		c.EtcdURL = fmt.Sprintf("http://127.0.0.1:%d", cport)
		peer := fmt.Sprintf("http://127.0.0.1:%d", pport)
		c.etcdArgs = []string{
			"--name=default", "--data-dir=" + filepath.Join(c.Dir, "etcd"),
			"--listen-client-urls=" + c.EtcdURL, "--advertise-client-urls=" + c.EtcdURL,
			"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=default=" + peer, "--unsafe-no-fsync=true",
			"--quota-backend-bytes=8589934592", "--log-level=warn",
		}
	}
	p, err := c.spawn("etcd", c.etcdArgs)
	if err != nil {
		return err
	}
	return c.waitHTTP(ctx, p, c.EtcdURL+"/health", nil, 30*time.Second)
}

func (c *Cluster) startAPIServer(ctx context.Context) error {
	if c.apiArgs == nil {
		port, err := freePort()
		if err != nil {
			return err
		}
		c.Server = fmt.Sprintf("https://127.0.0.1:%d", port)
		c.apiArgs = []string{
			"--etcd-servers=" + c.EtcdURL,
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			"--cert-dir=" + c.pki(""),
			"--tls-cert-file=" + c.pki("apiserver.crt"), "--tls-private-key-file=" + c.pki("apiserver.key"),
			"--client-ca-file=" + c.pki("ca.crt"),
			"--token-auth-file=" + c.pki("tokens.csv"),
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-signing-key-file=" + c.pki("sa.key"),
			"--service-account-key-file=" + c.pki("sa.pub"),
			"--service-cluster-ip-range=10.0.0.0/24",
			"--authorization-mode=RBAC",
			"--endpoint-reconciler-type=none",
			"--disable-admission-plugins=ServiceAccount",
			"--allow-privileged=true", "--profiling=false", "--v=1",
		}
		if c.opts.CompactionInterval > 0 {
			c.apiArgs = append(c.apiArgs, "--etcd-compaction-interval="+c.opts.CompactionInterval.String())
		}
		c.apiArgs = append(c.apiArgs, c.opts.ExtraAPIServerFlags...)
		// KCMD_CLUSTER_APISERVER_FLAGS: more flags from the environment (e.g. an audit log for
		// `kcmd bench`, to tell which client sent which request: docs/bench.md).
		c.apiArgs = append(c.apiArgs, strings.Fields(os.Getenv("KCMD_CLUSTER_APISERVER_FLAGS"))...)
	}
	p, err := c.spawn("kube-apiserver", c.apiArgs)
	if err != nil {
		return err
	}
	if err := c.waitHTTP(ctx, p, c.Server+"/readyz", c.caPool(), 120*time.Second); err != nil {
		return err
	}
	return c.writeKubeconfigs()
}

func (c *Cluster) caPool() *x509.CertPool {
	pool := x509.NewCertPool()
	if b, err := os.ReadFile(c.CAFile); err == nil {
		pool.AppendCertsFromPEM(b)
	}
	return pool
}

// waitHTTP polls url until it answers 200, the process exits, or the timeout passes.
func (c *Cluster) waitHTTP(ctx context.Context, p *proc, url string, pool *x509.CertPool, timeout time.Duration) error {
	client := &http.Client{Timeout: 5 * time.Second}
	if pool != nil {
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	}
	deadline := time.Now().Add(timeout)
	last := "no answer yet"
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("harness: %s exited while starting; see %s", p.Name, filepath.Join(c.Dir, "logs", p.Name+".log"))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := client.Get(url)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			last = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("harness: %s not ready at %s after %s (%s); see %s", p.Name, url, timeout, last,
		filepath.Join(c.Dir, "logs", p.Name+".log"))
}

func kubeconfigText(server, ca, user, userBody string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kcmd-test
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: %s
  user:
%s
contexts:
- name: kcmd-test
  context:
    cluster: kcmd-test
    user: %s
current-context: kcmd-test
`, server, ca, user, userBody, user)
}

func (c *Cluster) writeKubeconfigs() error {
	write := func(file, user, body string) (string, error) {
		path := filepath.Join(c.Dir, file)
		return path, os.WriteFile(path, []byte(kubeconfigText(c.Server, c.CAFile, user, body)), 0o600)
	}
	var err error
	if c.Kubeconfig, err = write("kubeconfig", "kcmd-admin", "    token: "+c.AdminToken); err != nil {
		return err
	}
	if _, err = write("kubeconfig-cert", "kcmd-admin-cert", fmt.Sprintf("    client-certificate: %s\n    client-key: %s",
		c.pki("admin.crt"), c.pki("admin.key"))); err != nil {
		return err
	}
	ids := c.opts.Identities
	if ids == nil {
		ids = DefaultIdentities
	}
	for _, id := range ids {
		suffix := id.File
		if suffix == "" {
			suffix = strings.NewReplacer(":", "-", "/", "-").Replace(id.Name)
		}
		path, err := write("kubeconfig-"+suffix, suffix, "    token: "+c.Tokens[id.Name])
		if err != nil {
			return err
		}
		c.Kubeconfigs[id.Name] = path
	}
	return nil
}

// StartKCM starts upstream kube-controller-manager against the cluster as the admin user,
// without leader election.
func (c *Cluster) StartKCM(ctx context.Context, o KCMOptions) error {
	if _, ok := c.Procs["kube-controller-manager"]; ok {
		return errors.New("harness: kube-controller-manager already running")
	}
	args := []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--controllers=" + o.Controllers,
		"--v=1",
	}
	if o.QPS > 0 {
		args = append(args, "--kube-api-qps="+strconv.FormatFloat(o.QPS, 'f', -1, 64))
	}
	if o.Burst > 0 {
		args = append(args, "--kube-api-burst="+strconv.Itoa(o.Burst))
	}
	if o.MetricsPort > 0 {
		args = append(args, "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(o.MetricsPort),
			"--authentication-skip-lookup=true", "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
			"--authentication-kubeconfig="+c.Kubeconfig, "--authorization-kubeconfig="+c.Kubeconfig,
			"--cert-dir="+filepath.Join(c.Dir, "pki", "kcm"))
	} else {
		args = append(args, "--secure-port=0")
	}
	args = append(args, o.ExtraFlags...)
	p, err := c.spawn("kube-controller-manager", args)
	if err != nil {
		return err
	}
	// No serving port to poll by default: give it a moment and make sure it did not exit.
	select {
	case <-p.done:
		delete(c.Procs, "kube-controller-manager")
		return fmt.Errorf("harness: kube-controller-manager exited at start; see %s", filepath.Join(c.Dir, "logs", "kube-controller-manager.log"))
	case <-time.After(500 * time.Millisecond):
	}
	return c.saveState()
}

// stopProc sends SIGTERM to the process group, then SIGKILL after grace.
func stopProc(p *proc, grace time.Duration) {
	if p.cmd != nil {
		_ = syscall.Kill(-p.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
			return
		case <-time.After(grace):
		}
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
		<-p.done
		return
	}
	// A process of a detached cluster found through state.json: not our child.
	if !alive(p) {
		return
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGTERM)
	for end := time.Now().Add(grace); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if !alive(p) {
			return
		}
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	for i := 0; i < 50 && alive(p); i++ {
		time.Sleep(100 * time.Millisecond)
	}
}

// alive reports whether pid still runs the binary we started (guards against pid reuse).
func alive(p *proc) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.Pid))
	if err != nil || len(b) == 0 {
		return false
	}
	stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid))
	if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	return strings.Contains(strings.SplitN(string(b), "\x00", 2)[0], p.Name)
}

// StopKCM stops upstream kube-controller-manager if it runs.
func (c *Cluster) StopKCM() {
	if p, ok := c.Procs["kube-controller-manager"]; ok {
		stopProc(p, 5*time.Second)
		delete(c.Procs, "kube-controller-manager")
		_ = c.saveState()
	}
}

// RestartAPIServer kills kube-apiserver (SIGKILL when hard, else SIGTERM) and starts it again
// with the same flags and port, waiting for /readyz.
func (c *Cluster) RestartAPIServer(ctx context.Context, hard bool) error {
	return c.restart(ctx, "kube-apiserver", hard, c.startAPIServer)
}

// RestartEtcd kills etcd and starts it again on the same data directory and ports.
func (c *Cluster) RestartEtcd(ctx context.Context, hard bool) error {
	return c.restart(ctx, "etcd", hard, c.startEtcd)
}

func (c *Cluster) restart(ctx context.Context, name string, hard bool, start func(context.Context) error) error {
	p, ok := c.Procs[name]
	if !ok {
		return fmt.Errorf("harness: %s is not running", name)
	}
	if hard {
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
		if p.cmd != nil {
			<-p.done
		}
	}
	stopProc(p, 10*time.Second)
	delete(c.Procs, name)
	c.logf("stopped %s for restart", name)
	if err := start(ctx); err != nil {
		return err
	}
	return c.saveState()
}

// Stop stops every process (kcm, apiserver, etcd in that order) and removes the work
// directory when the harness created it.
func (c *Cluster) Stop() {
	for _, n := range []string{"kube-controller-manager", "kube-apiserver", "etcd"} {
		if p, ok := c.Procs[n]; ok {
			stopProc(p, 5*time.Second)
			delete(c.Procs, n)
		}
	}
	if c.OwnDir && c.Dir != "" {
		_ = os.RemoveAll(c.Dir)
		c.logf("removed %s", c.Dir)
	}
}

func (c *Cluster) saveState() error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.Dir, "state.json"), b, 0o600)
}

// Load reads the state of a detached cluster written by Start.
func Load(dir string, opts Options) (*Cluster, error) {
	b, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		return nil, err
	}
	c := &Cluster{}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("harness: %s/state.json: %w", dir, err)
	}
	c.opts = opts
	for _, p := range c.Procs {
		if p.Name == "kube-apiserver" {
			c.apiArgs = p.Args
		} else if p.Name == "etcd" {
			c.etcdArgs = p.Args
		}
	}
	return c, nil
}
