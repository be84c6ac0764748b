// SPDX-License-Identifier: Apache-2.0

package e2e

// Issue 19, the swap of docs/operations.md ("Replace kube-controller-manager", kubeadm): the test
// takes the kube-controller-manager static pod that kubeadm v1.37.2 itself generates (kubeadm's
// Go code: its defaulted InitConfiguration with --pod-network-cidr, controlplane.GetStaticPodSpecs),
// applies the documented transformation (kcmdFromKubeadmPod, the doc's steps and nothing else),
// and runs kcmd with exactly the resulting container command against a private test cluster with
// no other controller manager. There is no kubelet here, so the test plays its part: the host
// paths of the manifest's volumes are mapped onto the test cluster's files (the only change made
// to the command line), and the manifest's own startup probe (HTTPS GET 127.0.0.1:10257/healthz)
// is what the test polls. Then back: kcmd stopped with SIGTERM (what the kubelet does when the
// manifest is swapped back), upstream kube-controller-manager started with kubeadm's original
// command, same mapping. Each side is checked for what kubeadm's flags turn on: the Lease
// kube-system/kube-controller-manager held (shared with any kcm still running, so the two never
// lead at once), per-controller ServiceAccounts (--use-service-account-credentials),
// kube-root-ca.crt carrying --root-ca-file, a Node's pod CIDR from --cluster-cidr
// (--allocate-node-cidrs), the namespace's default ServiceAccount.
// Not covered: the kubelet itself (the pod's image, volumes, securityContext and the restart on a
// manifest change are not exercised, only its command line and its probe).

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kubeadmconstants "k8s.io/kubernetes/cmd/kubeadm/app/constants"
	"k8s.io/kubernetes/cmd/kubeadm/app/phases/controlplane"
	configutil "k8s.io/kubernetes/cmd/kubeadm/app/util/config"
	"k8s.io/utils/ptr"

	"kcmd.local/tests/cluster/harness"
)

const swapImage = "registry.example/kcmd:0.1.0"

// kubeadmKCMPod is kubeadm v1.37.2's kube-controller-manager static pod for a default control
// plane initialised with --pod-network-cidr=10.244.0.0/16.
func kubeadmKCMPod(t *testing.T) corev1.Pod {
	t.Helper()
	cfg, err := configutil.DefaultedStaticInitConfiguration()
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClusterConfiguration.Networking.PodSubnet = "10.244.0.0/16"
	specs := controlplane.GetStaticPodSpecs(&cfg.ClusterConfiguration, &cfg.LocalAPIEndpoint, nil)
	pod, ok := specs[kubeadmconstants.KubeControllerManager]
	if !ok {
		t.Fatal("kubeadm generated no kube-controller-manager pod")
	}
	return pod
}

// kcmdFromKubeadmPod is docs/operations.md's transformation of kubeadm's manifest, step by step:
// 1. image: kcmd's; 2. command[0]: kcmd (every kcm flag stays); 3. one flag added,
// --leader-elect-resource-name=kube-controller-manager; 4. the container runs as root (kubeadm's
// pki files are root's, mode 0600; kcmd's image defaults to uid 65532).
func kcmdFromKubeadmPod(in corev1.Pod, image string) corev1.Pod {
	p := *in.DeepCopy()
	c := &p.Spec.Containers[0]
	c.Image = image
	c.Command[0] = "kcmd"
	c.Command = append(c.Command, "--leader-elect-resource-name=kube-controller-manager")
	c.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](0), RunAsGroup: ptr.To[int64](0)}
	return p
}

// swapMapPaths maps the manifest's host paths onto the test cluster's files (the kubelet's
// hostPath mounts, played by the test); every other character of the command stays.
func swapMapPaths(t *testing.T, c *harness.Cluster, args []string) []string {
	t.Helper()
	kcfg := c.Kubeconfigs["system:kube-controller-manager"]
	if kcfg == "" {
		t.Fatal("the test cluster has no system:kube-controller-manager kubeconfig")
	}
	pki := filepath.Join(c.Dir, "pki")
	m := strings.NewReplacer(
		"/etc/kubernetes/controller-manager.conf", kcfg,
		// the test cluster has no front proxy: its CA stands in for front-proxy-ca.crt
		"/etc/kubernetes/pki/front-proxy-ca.crt", c.CAFile,
		"/etc/kubernetes/pki/", pki+"/")
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = m.Replace(a)
		if strings.Contains(out[i], "/etc/kubernetes") {
			t.Fatalf("unmapped host path in %q", a)
		}
	}
	return out
}

type swapProc struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs strings.Builder
	done chan struct{}
}

func swapStart(t *testing.T, bin string, args []string) *swapProc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &swapProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.logs.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			p.mu.Lock()
			l := p.logs.String()
			p.mu.Unlock()
			if len(l) > 20000 {
				l = l[len(l)-20000:]
			}
			t.Logf("%s's log (tail):\n%s", filepath.Base(bin), l)
		}
	})
	return p
}

func (p *swapProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// swapProbePort is the startup probe's port, a name (kubeadm's "probe-port") resolved through
// the container's ports as the kubelet does.
func swapProbePort(t *testing.T, pod corev1.Pod) string {
	t.Helper()
	c := pod.Spec.Containers[0]
	if c.StartupProbe == nil || c.StartupProbe.HTTPGet == nil {
		t.Fatal("the manifest has no HTTP startup probe")
	}
	p := c.StartupProbe.HTTPGet.Port
	if p.Type == intstr.Int {
		return p.String()
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return strconv.Itoa(int(cp.ContainerPort))
		}
	}
	t.Fatalf("the probe's port %q is not a container port", p.StrVal)
	return ""
}

// swapProbe is the manifest's startup probe as the kubelet runs it (HTTPS, certificate not
// verified, 2xx/3xx is success).
func swapProbe(t *testing.T, pod corev1.Pod) (bool, string) {
	g := pod.Spec.Containers[0].StartupProbe.HTTPGet
	url := fmt.Sprintf("%s://%s/%s", strings.ToLower(string(g.Scheme)),
		net.JoinHostPort(g.Host, swapProbePort(t, pod)), strings.TrimPrefix(g.Path, "/"))
	cl := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := cl.Get(url)
	if err != nil {
		return false, url + ": " + err.Error()
	}
	resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode < 400, fmt.Sprintf("%s: HTTP %d", url, resp.StatusCode)
}

// swapChecks: what kubeadm's flags turn on, in a fresh namespace and on a fresh Node.
func swapChecks(t *testing.T, c *harness.Cluster, who, ns, node string) {
	t.Helper()
	ctx := context.Background()
	cs := env.Client
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(c.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	_, clusterCIDR, _ := net.ParseCIDR("10.244.0.0/16")
	Eventually(t, 60*time.Second, who+": default ServiceAccount, kube-root-ca.crt from --root-ca-file, pod CIDR from --cluster-cidr, per-controller ServiceAccounts", func() (bool, string) {
		if _, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return false, "serviceaccount default: " + err.Error()
		}
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		if err != nil {
			return false, "kube-root-ca.crt: " + err.Error()
		}
		if cm.Data["ca.crt"] != string(ca) {
			return false, "kube-root-ca.crt does not hold the --root-ca-file CA"
		}
		n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, "node: " + err.Error()
		}
		ip, _, err := net.ParseCIDR(n.Spec.PodCIDR)
		if err != nil || !clusterCIDR.Contains(ip) {
			return false, fmt.Sprintf("node pod CIDR %q not in 10.244.0.0/16", n.Spec.PodCIDR)
		}
		// --use-service-account-credentials: the controllers' own identities
		for _, sa := range []string{"namespace-controller", "node-controller", "root-ca-cert-publisher"} {
			if _, err := cs.CoreV1().ServiceAccounts("kube-system").Get(ctx, sa, metav1.GetOptions{}); err != nil {
				return false, "kube-system/" + sa + ": " + err.Error()
			}
		}
		return true, ""
	})
}

func swapLeaseHolder(t *testing.T) string {
	l, err := env.Client.CoordinationV1().Leases("kube-system").Get(context.Background(), "kube-controller-manager", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func swapWaitPortFree(t *testing.T, port string) {
	t.Helper()
	Eventually(t, 30*time.Second, "127.0.0.1:"+port+" free (the manifest's port)", func() (bool, string) {
		l, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err != nil {
			return false, err.Error()
		}
		l.Close()
		return true, ""
	})
}

func TestDropIn_KubeadmManifestSwap(t *testing.T) {
	begin := time.Now()
	pod := kubeadmKCMPod(t)
	orig := pod.Spec.Containers[0].Command
	// kubeadm's manifest is what the docs say it is
	for _, f := range []string{"--controllers=*,bootstrapsigner,tokencleaner", "--use-service-account-credentials=true",
		"--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16", "--leader-elect=true",
		"--kubeconfig=/etc/kubernetes/controller-manager.conf", "--root-ca-file=/etc/kubernetes/pki/ca.crt"} {
		found := false
		for _, a := range orig {
			found = found || a == f
		}
		if !found {
			t.Fatalf("kubeadm's kube-controller-manager command has no %s: %q", f, orig)
		}
	}
	if orig[0] != "kube-controller-manager" {
		t.Fatalf("kubeadm's command starts with %q", orig[0])
	}
	swapped := kcmdFromKubeadmPod(pod, swapImage)
	sc := swapped.Spec.Containers[0]
	if sc.Command[0] != "kcmd" || !reflect.DeepEqual(sc.Command[1:len(orig)], orig[1:]) ||
		!reflect.DeepEqual(sc.StartupProbe, pod.Spec.Containers[0].StartupProbe) ||
		!reflect.DeepEqual(sc.LivenessProbe, pod.Spec.Containers[0].LivenessProbe) ||
		!reflect.DeepEqual(swapped.Spec.Volumes, pod.Spec.Volumes) {
		t.Fatalf("the transformation changed more than the docs say: %q", sc.Command)
	}
	port := swapProbePort(t, swapped)
	if port != "10257" {
		t.Fatalf("kubeadm's probe port is %s, not kcm's 10257", port)
	}

	ctx := context.Background()
	c, err := harness.Start(ctx, harness.Options{BinDir: os.Getenv("KCMD_CLUSTER_BIN"), WorkDir: filepath.Join(t.TempDir(), "cluster")})
	if err != nil {
		t.Fatalf("starting the cluster: %v", err)
	}
	t.Cleanup(c.Stop)
	useClusterAsAdmin(t, c, "kcmd-swap-admin", "kcmd:swap-admins")
	if env.KcmdBinDir == "" || os.Getenv("KCMD_CLUSTER_BIN") == "" {
		t.Fatal("KCMD_BIN_DIR or KCMD_CLUSTER_BIN is not set (run through make e2e)")
	}

	// kcm -> kcmd: exactly the transformed command, host paths mapped
	swapWaitPortFree(t, port)
	kargs := swapMapPaths(t, c, sc.Command[1:])
	t.Logf("kcmd %s", strings.Join(kargs, " "))
	k := swapStart(t, filepath.Join(env.KcmdBinDir, "kcmd"), kargs)
	Eventually(t, 60*time.Second, "kcmd: the manifest's startup probe passes", func() (bool, string) {
		if k.exited() {
			t.Fatal("kcmd exited")
		}
		return swapProbe(t, swapped)
	})
	Eventually(t, 60*time.Second, "kcmd holds the Lease kube-system/kube-controller-manager", func() (bool, string) {
		h := swapLeaseHolder(t)
		return h != "", "holder " + h
	})
	kholder := swapLeaseHolder(t)
	swapChecks(t, c, "kcmd", "swap-kcmd", "swap-node-kcmd")
	t.Logf("kcmd in kcm's place in %.1fs (holder %s)", time.Since(begin).Seconds(), kholder)

	// kcmd -> kcm: the manifest swapped back; the kubelet stops the old container with SIGTERM
	_ = k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(20 * time.Second):
		t.Fatal("kcmd did not exit within 20 s of SIGTERM")
	}
	swapWaitPortFree(t, port)
	margs := swapMapPaths(t, c, orig[1:])
	m := swapStart(t, filepath.Join(os.Getenv("KCMD_CLUSTER_BIN"), "kube-controller-manager"), margs)
	Eventually(t, 60*time.Second, "kube-controller-manager: the manifest's startup probe passes", func() (bool, string) {
		if m.exited() {
			t.Fatal("kube-controller-manager exited")
		}
		return swapProbe(t, pod)
	})
	Eventually(t, 60*time.Second, "kube-controller-manager holds the Lease after kcmd", func() (bool, string) {
		h := swapLeaseHolder(t)
		return h != "" && h != kholder, "holder " + h
	})
	swapChecks(t, c, "kube-controller-manager", "swap-kcm", "swap-node-kcm")
	t.Logf("kcm -> kcmd -> kcm in %.1fs", time.Since(begin).Seconds())
}
