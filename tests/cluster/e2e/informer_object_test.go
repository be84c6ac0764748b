package e2e

// Full-object records (issue 15, shm/records.h SHM_RECORD_OBJECT): a resource informerd is
// told to keep whole ("@object" in --resources; KCMD_CACHE_OBJECT in a controller's watch) is
// cached with every annotation and the object's JSON as the apiserver sent it, and a reader of
// the arena (kcmd-cachedump object, through the record codec's view) gets both back.

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type cachedObject struct {
	apiVersion, kind string
	annotations      map[string]string
	labels           map[string]string
	body             map[string]any
}

// readObject runs `kcmd-cachedump object` and parses its output; ok=false while the object is
// not in the arena (or not yet at the wanted resourceVersion).
func readObject(t *testing.T, arena, res, ns, name string) (*cachedObject, string) {
	t.Helper()
	out, err := exec.Command(filepath.Join(env.KcmdBinDir, "kcmd-cachedump"), "object", arena, res,
		ns, name).CombinedOutput()
	if err != nil {
		return nil, strings.TrimSpace(string(out))
	}
	o := &cachedObject{annotations: map[string]string{}, labels: map[string]string{}}
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		k, v, _ := strings.Cut(l, " ")
		switch k {
		case "apiVersion":
			o.apiVersion = v
		case "kind":
			o.kind = v
		case "annotation", "label":
			ak, av, _ := strings.Cut(v, "=")
			if k == "annotation" {
				o.annotations[ak] = av
			} else {
				o.labels[ak] = av
			}
		case "body":
			if err := json.Unmarshal([]byte(v), &o.body); err != nil {
				t.Fatalf("the cached body is not JSON: %v: %q", err, v)
			}
		}
	}
	return o, ""
}

func waitObject(t *testing.T, arena, res, ns, name, rv string) *cachedObject {
	t.Helper()
	var o *cachedObject
	Eventually(t, 30*time.Second, res+" "+name+" cached at resourceVersion "+rv, func() (bool, string) {
		var why string
		o, why = readObject(t, arena, res, ns, name)
		if o == nil {
			return false, why
		}
		md, _ := o.body["metadata"].(map[string]any)
		got, _ := md["resourceVersion"].(string)
		return got == rv, "cached resourceVersion " + got
	})
	return o
}

// TestInformer_FullObjectConfigMapDeployment: a ConfigMap and a Deployment with annotations
// (more than the few a metadata-only record keeps) are cached whole; an update reaches the
// cache; a metadata-only resource in the same informerd stays metadata-only.
func TestInformer_FullObjectConfigMapDeployment(t *testing.T) {
	ns := Namespace(t)
	ctx := context.Background()
	h := holdArena(t)
	p := startInformerd(t, h.path, filepath.Join(t.TempDir(), "metrics"),
		"--resources=pods,configmaps@object,deployments.apps@object,secrets")
	waitSynced(t, p)

	ann := map[string]string{
		"example.com/owner":                                "team-a",
		"deployment.kubernetes.io/revision":                "4",
		"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","kind":"ConfigMap"}`,
	}
	cm, err := env.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "full", Annotations: ann, Labels: map[string]string{"app": "x"}},
		Data:       map[string]string{"config.yaml": "a: 1\nb: [2, 3]\n", "quote": `"q"`},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := waitObject(t, h.path, "configmaps", ns, "full", cm.ResourceVersion)
	if o.apiVersion != "v1" || o.kind != "ConfigMap" {
		t.Errorf("apiVersion/kind %q/%q, want v1/ConfigMap", o.apiVersion, o.kind)
	}
	for k, v := range ann {
		if o.annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, o.annotations[k], v)
		}
	}
	if o.labels["app"] != "x" {
		t.Errorf("labels %v", o.labels)
	}
	data, _ := o.body["data"].(map[string]any)
	if data["config.yaml"] != cm.Data["config.yaml"] || data["quote"] != cm.Data["quote"] {
		t.Errorf("cached data %v, want %v", data, cm.Data)
	}

	// an update reaches the cached body and annotations
	cm.Data["quote"] = "changed"
	cm.Annotations["example.com/owner"] = "team-b"
	cm, err = env.Client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o = waitObject(t, h.path, "configmaps", ns, "full", cm.ResourceVersion)
	data, _ = o.body["data"].(map[string]any)
	if data["quote"] != "changed" || o.annotations["example.com/owner"] != "team-b" {
		t.Errorf("after the update: data %v annotations %v", data, o.annotations)
	}

	replicas := int32(2)
	d, err := env.Client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"example.com/rollout": "canary"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o = waitObject(t, h.path, "deployments.apps", ns, "web", d.ResourceVersion)
	if o.apiVersion != "apps/v1" || o.kind != "Deployment" || o.annotations["example.com/rollout"] != "canary" {
		t.Errorf("deployment: %q %q annotations %v", o.apiVersion, o.kind, o.annotations)
	}
	spec, _ := o.body["spec"].(map[string]any)
	if spec["replicas"] != float64(2) {
		t.Errorf("cached spec.replicas %v, want 2 (spec %v)", spec["replicas"], spec)
	}
	tmpl, _ := spec["template"].(map[string]any)
	tspec, _ := tmpl["spec"].(map[string]any)
	if cs, _ := tspec["containers"].([]any); len(cs) != 1 {
		t.Errorf("cached template containers %v", tspec["containers"])
	}

	// negative control: a metadata-only resource of the same informerd has no full record
	if _, err := env.Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s", Annotations: map[string]string{"example.com/a": "b"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	Eventually(t, 30*time.Second, "secret cached", func() (bool, string) {
		out, _ := exec.Command(filepath.Join(env.KcmdBinDir, "kcmd-cachedump"), "objects", h.path,
			"secrets").CombinedOutput()
		return strings.Contains(string(out), " s "), string(out)
	})
	if o, why := readObject(t, h.path, "secrets", ns, "s"); o != nil || !strings.Contains(why, "not a full-object record") {
		t.Errorf("a metadata-only record read as a full object: %v %q", o, why)
	}
}
