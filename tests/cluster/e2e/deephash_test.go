package e2e

// The pod-template hash (kube/deephash.c) against upstream's own ComputeHash (k8s.io/kubernetes
// v1.37.2 pkg/controller), over a corpus of templates that exercises every kind of value the
// deep printer meets: pointers set and nil, nil and empty lists and maps, quantities on both of
// ParseQuantity's paths (int64 with and without the cached string, inf.Dec with big.Int words),
// IntOrString as number and string, inlined structs, probes, affinity, volumes, security
// contexts. The C side runs as build/t/kube/tests/test-deephash in its filter mode.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/pkg/controller"
	deploymentutil "k8s.io/kubernetes/pkg/controller/deployment/util"
	"k8s.io/utils/dump"
	"kcmd.local/tests/cluster/harness"
)

func deephashBin(t *testing.T) string {
	bin := filepath.Join(env.KcmdBinDir, "..", "t", "kube", "tests", "test-deephash")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s not built: %v (make e2e builds it)", bin, err)
	}
	return bin
}

// cHash runs the C filter over one JSON template per line; args: "--hash [N]" or "--dump".
func cHash(t *testing.T, lines []string, args ...string) []string {
	t.Helper()
	cmd := exec.Command(deephashBin(t), args...)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("test-deephash %v: %v", args, err)
	}
	var res []string
	if args[0] == "--dump" {
		res = strings.Split(string(out), "\x00")
		if len(res) > 0 && res[len(res)-1] == "" {
			res = res[:len(res)-1]
		}
		if len(res) != len(lines) {
			t.Fatalf("test-deephash %v: %d results for %d templates", args, len(res), len(lines))
		}
		return res
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		res = append(res, sc.Text())
	}
	if len(res) != len(lines) {
		t.Fatalf("test-deephash %v: %d results for %d templates", args, len(res), len(lines))
	}
	return res
}

func loadCorpus(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out []string
	for _, r := range raw {
		var c bytes.Buffer
		if err := json.Compact(&c, r); err != nil {
			t.Fatal(err)
		}
		out = append(out, c.String())
	}
	return out
}

var deephashCollisions = []*int32{nil, ptr32(0), ptr32(3), ptr32(2147483647)}

func ptr32(v int32) *int32 { return &v }

// compareHashes checks the C hashes of jsonLines against upstream's of templates (same order),
// for every collision count, and on a mismatch shows where the printed texts part.
func compareHashes(t *testing.T, what string, jsonLines []string, templates []*corev1.PodTemplateSpec) {
	t.Helper()
	dumps := cHash(t, jsonLines, "--dump")
	for _, cc := range deephashCollisions {
		args := []string{"--hash"}
		if cc != nil {
			args = append(args, fmt.Sprint(*cc))
		}
		got := cHash(t, jsonLines, args...)
		for i, tmpl := range templates {
			want := controller.ComputeHash(tmpl, cc)
			if got[i] != want {
				up := dump.ForHash(*tmpl)
				k := 0
				for k < len(up) && k < len(dumps[i]) && up[k] == dumps[i][k] {
					k++
				}
				lo := max(0, k-200)
				t.Errorf("%s #%d (collisionCount %v): kcmd %s, upstream %s\n json: %s\n upstream text from byte %d: ...%s\n kcmd text from byte %d:     ...%s",
					what, i, args[1:], got[i], want, jsonLines[i], lo, up[lo:min(len(up), k+200)], lo, dumps[i][lo:min(len(dumps[i]), k+200)])
			}
		}
	}
}

// TestDeephash_APIServer is the path kcm and kcmd really take: each template is stored by the
// real apiserver (as a PodTemplate: defaulted, quantities canonicalised, kept as protobuf in
// etcd), then read back twice: as kcm reads it (protobuf, decoded by client-go into the Go
// struct upstream hashes) and as kcmd reads it (JSON, hashed by the C printer).
func TestDeephash_APIServer(t *testing.T) {
	corpus := loadCorpus(t, "deephash-templates.json")
	ns := Namespace(t)
	ctx := context.Background()
	pcfg := rest.CopyConfig(env.Config)
	pcfg.ContentType = "application/vnd.kubernetes.protobuf"
	pcfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
	pcs, err := kubernetes.NewForConfig(pcfg)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	var templates []*corev1.PodTemplateSpec
	for i, js := range corpus {
		var spec corev1.PodTemplateSpec
		if err := json.Unmarshal([]byte(js), &spec); err != nil {
			t.Fatalf("corpus #%d: %v", i, err)
		}
		pt := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("t%d", i)}, Template: spec}
		if _, err := env.Client.CoreV1().PodTemplates(ns).Create(ctx, pt, metav1.CreateOptions{}); err != nil {
			t.Fatalf("corpus #%d: create: %v", i, err)
		}
		got, err := pcs.CoreV1().PodTemplates(ns).Get(ctx, pt.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// What the deployment controller hashes: a deep copy of the informer's template.
		templates = append(templates, got.Template.DeepCopy())
		raw, err := env.Client.CoreV1().RESTClient().Get().Namespace(ns).Resource("podtemplates").
			Name(pt.Name).SetHeader("Accept", "application/json").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var obj struct {
			Template json.RawMessage `json:"template"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, obj.Template); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, c.String())
	}
	compareHashes(t, "apiserver corpus", lines, templates)
	t.Logf("%d templates x %d collision counts compared", len(lines), len(deephashCollisions))
}

// TestDeephash_JSONDecode covers what the apiserver never sends but Go's JSON decoder gives a
// meaning to (empty lists and maps, non-canonical quantities, repeated keys): the C printer must
// agree with upstream's hash of the same JSON decoded by encoding/json. And what it must refuse
// rather than hash differently.
func TestDeephash_JSONDecode(t *testing.T) {
	corpus := append(loadCorpus(t, "deephash-templates.json"), loadCorpus(t, "deephash-json-only.json")...)
	var templates []*corev1.PodTemplateSpec
	for i, js := range corpus {
		var spec corev1.PodTemplateSpec
		if err := json.Unmarshal([]byte(js), &spec); err != nil {
			t.Fatalf("corpus #%d: %v", i, err)
		}
		templates = append(templates, &spec)
	}
	compareHashes(t, "json corpus", corpus, templates)
	checkGolden(t, corpus, templates)
	refused := loadCorpus(t, "deephash-refused.json")
	for i, r := range cHash(t, refused, "--hash") {
		if !strings.HasPrefix(r, "error ") {
			t.Errorf("refused #%d: kcmd hashed it (%s), want an error: %s", i, r, refused[i])
		}
	}
}

// The fixture kcmd's unit test (kube/tests/test-deephash.c) checks without Go: per line, the
// hash without and with collision count 3, then the template's JSON. Its hashes are checked
// against upstream here; KCMD_UPDATE_GOLDEN=1 rewrites it from the corpus.
const deephashGolden = "../../../kube/tests/fixtures/deephash-golden.txt"

func checkGolden(t *testing.T, corpus []string, templates []*corev1.PodTemplateSpec) {
	t.Helper()
	if os.Getenv("KCMD_UPDATE_GOLDEN") == "1" {
		var b strings.Builder
		for i, js := range corpus {
			fmt.Fprintf(&b, "%s %s %s\n", controller.ComputeHash(templates[i], nil), controller.ComputeHash(templates[i], ptr32(3)), js)
		}
		if err := os.WriteFile(deephashGolden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(deephashGolden)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			t.Fatalf("%s: bad line %q", deephashGolden, line)
		}
		var spec corev1.PodTemplateSpec
		if err := json.Unmarshal([]byte(f[2]), &spec); err != nil {
			t.Fatalf("%s: %v", deephashGolden, err)
		}
		if h := controller.ComputeHash(&spec, nil); h != f[0] {
			t.Errorf("%s: line %d: hash %s, upstream %s", deephashGolden, n+1, f[0], h)
		}
		if h := controller.ComputeHash(&spec, ptr32(3)); h != f[1] {
			t.Errorf("%s: line %d: hash (collisionCount 3) %s, upstream %s", deephashGolden, n+1, f[1], h)
		}
		n++
	}
	if n < len(corpus) {
		t.Errorf("%s has %d templates, the corpus %d (KCMD_UPDATE_GOLDEN=1 rewrites it)", deephashGolden, n, len(corpus))
	}
}

// TestDeephash_EqualIgnoreHash: kube_pod_template_equal_ignore_hash against upstream's
// deploymentutil.EqualIgnoreHash (how the controller finds a Deployment's new ReplicaSet), on
// designed pairs and on every pair of the hash corpus.
func TestDeephash_EqualIgnoreHash(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "deephash-equal-pairs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pairs [][2]json.RawMessage
	if err := json.Unmarshal(b, &pairs); err != nil {
		t.Fatal(err)
	}
	var lines []string
	compact := func(r []byte) string {
		var c bytes.Buffer
		if err := json.Compact(&c, r); err != nil {
			t.Fatal(err)
		}
		return c.String()
	}
	for _, p := range pairs {
		lines = append(lines, compact(p[0])+"\t"+compact(p[1]))
	}
	corpus := append(loadCorpus(t, "deephash-templates.json"), loadCorpus(t, "deephash-json-only.json")...)
	for _, a := range corpus {
		for _, c := range corpus {
			lines = append(lines, a+"\t"+c)
		}
	}
	got := cHash(t, lines, "--equal")
	equal := 0
	for i, l := range lines {
		f := strings.SplitN(l, "\t", 2)
		var x, y corev1.PodTemplateSpec
		if err := json.Unmarshal([]byte(f[0]), &x); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(f[1]), &y); err != nil {
			t.Fatal(err)
		}
		want := "0"
		if deploymentutil.EqualIgnoreHash(&x, &y) {
			want = "1"
			equal++
		}
		if got[i] != want {
			t.Errorf("pair #%d: kcmd %s, upstream %s\n a: %s\n b: %s", i, got[i], want, f[0], f[1])
		}
	}
	t.Logf("%d pairs compared, %d equal", len(lines), equal)
}

// TestDeephash_UpstreamKCM is the ground truth: upstream kube-controller-manager's own deployment
// controller creates the ReplicaSets of Deployments made from the corpus, and each ReplicaSet's
// pod-template-hash label must be what kcmd computes from the Deployment as the apiserver serves
// it in JSON.
func TestDeephash_UpstreamKCM(t *testing.T) {
	ctx := context.Background()
	if err := env.Cluster.StartKCM(ctx, harness.KCMOptions{Controllers: "deployment-controller"}); err != nil {
		t.Fatal(err)
	}
	defer env.Cluster.StopKCM()
	ns := Namespace(t)
	corpus := loadCorpus(t, "deephash-templates.json")
	for i, js := range corpus {
		var tmpl corev1.PodTemplateSpec
		if err := json.Unmarshal([]byte(js), &tmpl); err != nil {
			t.Fatal(err)
		}
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("d%d", i)},
			Spec: appsv1.DeploymentSpec{Replicas: ptr32(0), Template: tmpl,
				Selector: &metav1.LabelSelector{MatchLabels: tmpl.Labels}}}
		if _, err := env.Client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatalf("corpus #%d: create: %v", i, err)
		}
	}
	for i := range corpus {
		name := fmt.Sprintf("d%d", i)
		var label string
		Eventually(t, 60*time.Second, name+"'s ReplicaSet", func() (bool, string) {
			rss, err := env.Client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, rs := range rss.Items {
				if c := metav1.GetControllerOf(&rs); c != nil && c.Name == name {
					label = rs.Labels["pod-template-hash"]
					return true, ""
				}
			}
			return false, "no ReplicaSet yet"
		})
		raw, err := env.Client.AppsV1().RESTClient().Get().Namespace(ns).Resource("deployments").
			Name(name).SetHeader("Accept", "application/json").DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var obj struct {
			Spec struct {
				Template json.RawMessage `json:"template"`
			} `json:"spec"`
			Status struct {
				CollisionCount *int32 `json:"collisionCount"`
			} `json:"status"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatal(err)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, obj.Spec.Template); err != nil {
			t.Fatal(err)
		}
		args := []string{"--hash"}
		if obj.Status.CollisionCount != nil {
			args = append(args, fmt.Sprint(*obj.Status.CollisionCount))
		}
		if got := cHash(t, []string{c.String()}, args...)[0]; got != label {
			t.Errorf("%s: kcmd %s, upstream kcm's ReplicaSet label %s\n template: %s", name, got, label, c.String())
		}
	}
	t.Logf("%d Deployments: kcmd's hash equals upstream kcm's pod-template-hash label", len(corpus))
}

// TestDeephash_SchemaCurrent: kube/deephash-schema.c is what the generator makes from the
// k8s.io/api in go.mod (compared without whitespace: the checked-in file is clang-formatted).
func TestDeephash_SchemaCurrent(t *testing.T) {
	cmd := exec.Command("go", "run", "./cmd/gen-deephash-schema")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("generator: %v", err)
	}
	have, err := os.ReadFile("../../../kube/deephash-schema.c")
	if err != nil {
		t.Fatal(err)
	}
	strip := func(b []byte) string { return strings.Join(strings.Fields(string(b)), "") }
	if strip(out) != strip(have) {
		t.Errorf("kube/deephash-schema.c is stale: regenerate it (docs/deployment.md)")
	}
}
