package e2e

// The deployment controller reads a Deployment's ReplicaSets from the shared cache, as
// upstream's syncDeployment reads them from its ReplicaSet informer's lister
// (getReplicaSetsForDeployment): a sync makes no LIST of ReplicaSets (docs/deployment.md).

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/utils/ptr"
)

// dpNamespacedRSLists sums the apiserver's apiserver_request_total{verb="LIST",
// resource="replicasets",scope="namespace"}: namespace-scoped LISTs of ReplicaSets, which
// kcmd's informerd (it lists every namespace at once) never makes.
func dpNamespacedRSLists(t *testing.T) int64 {
	t.Helper()
	if n, ok := dpNamespacedRSListsOnce(t); ok {
		return n
	}
	// the series appears only once such a LIST was served: make one, so that a missing
	// series cannot pass for "no LIST" (a renamed metric or label would)
	if _, err := env.Client.AppsV1().ReplicaSets("default").List(context.Background(), metav1.ListOptions{Limit: 1}); err != nil {
		t.Fatalf("listing ReplicaSets: %v", err)
	}
	n, ok := dpNamespacedRSListsOnce(t)
	if !ok {
		t.Fatal(`no apiserver_request_total{verb="LIST",resource="replicasets",scope="namespace"} after such a LIST`)
	}
	return n
}

func dpNamespacedRSListsOnce(t *testing.T) (int64, bool) {
	t.Helper()
	raw, err := env.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	var n int64
	seen := false
	for _, l := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(l, "apiserver_request_total{") || !strings.Contains(l, `verb="LIST"`) ||
			!strings.Contains(l, `resource="replicasets"`) || !strings.Contains(l, `scope="namespace"`) {
			continue
		}
		f := strings.Fields(l)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("unparsable metric line %q: %v", l, err)
		}
		n += int64(v)
		seen = true
	}
	return n, seen
}

// TestDeployment_SyncMakesNoReplicaSetList: a Deployment created, rolled out to a new template
// and scaled (dozens of syncs, each reading its ReplicaSets) makes no namespace-scoped LIST of
// ReplicaSets; the test itself reads Deployments only until the count is taken again.
func TestDeployment_SyncMakesNoReplicaSetList(t *testing.T) {
	dpStart(t)
	ns := Namespace(t)
	before := dpNamespacedRSLists(t)
	d0 := dpNew(ns, "no-rs-list", 3)
	d0.Spec.RevisionHistoryLimit = ptr.To(int32(1))
	d := dpCreate(t, d0)
	dpWaitComplete(t, ns, d.Name)
	dpUpdate(t, ns, d.Name, func(x *appsv1.Deployment) { x.Spec.Template.Spec.Containers[0].Image = "fake/image:2" })
	dpWaitComplete(t, ns, d.Name)
	dpUpdate(t, ns, d.Name, func(x *appsv1.Deployment) { x.Spec.Replicas = ptr.To(int32(5)) })
	d = dpWaitComplete(t, ns, d.Name)
	// the revision annotation the syncs copy from the new ReplicaSet's (read from the cache)
	if got := d.Annotations["deployment.kubernetes.io/revision"]; got != "2" {
		t.Errorf("Deployment revision %q, want 2", got)
	}
	time.Sleep(2 * time.Second) // the syncs the last status write triggers
	after := dpNamespacedRSLists(t)
	if after != before {
		t.Errorf("namespace-scoped ReplicaSet LISTs during the Deployment's syncs: %d (before %d, after %d), want 0",
			after-before, before, after)
	}
	// the history limit applied from the cache's view: one old ReplicaSet kept
	if owned := dpOwnedRS(t, d); len(owned) != 2 {
		t.Errorf("%d ReplicaSets owned, want 2 (the new one and revisionHistoryLimit=1 old one)", len(owned))
	}
}

// TestDeployment_NewReplicaSetCreatedCondition: upstream's getNewReplicaSet writes the status
// right after creating a ReplicaSet (Progressing True NewReplicaSetCreated "Created new replica
// set %q", with the Deployment's revision annotation in that same write): a watch from the
// Deployment's creation sees that version of the object.
func TestDeployment_NewReplicaSetCreatedCondition(t *testing.T) {
	dpStart(t)
	ns := Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	w, err := env.Client.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watching deployments: %v", err)
	}
	defer w.Stop()
	d := dpCreate(t, dpNew(ns, "new-rs-created", 2))
	var seen []string
	for ev := range w.ResultChan() {
		x, ok := ev.Object.(*appsv1.Deployment)
		if !ok || x.Name != d.Name {
			continue
		}
		c := dpCond(x, appsv1.DeploymentProgressing)
		if c == nil {
			continue
		}
		seen = append(seen, c.Reason)
		if c.Reason != "NewReplicaSetCreated" {
			continue
		}
		rs := dpNewRS(t, x)
		if rs == nil {
			t.Fatal("NewReplicaSetCreated written but no new ReplicaSet")
		}
		if want := fmt.Sprintf("Created new replica set %q", rs.Name); c.Message != want || c.Status != corev1.ConditionTrue {
			t.Errorf("condition %s %q, want True %q", c.Status, c.Message, want)
		}
		if got := x.Annotations["deployment.kubernetes.io/revision"]; got != "1" {
			t.Errorf("revision annotation %q in the same write, want 1", got)
		}
		return
	}
	t.Fatalf("no status with Progressing NewReplicaSetCreated; Progressing reasons seen: %v", seen)
}

// TestDeployment_ReplicaSetCreateError: a ReplicaSet creation the apiserver refuses (a
// Deployment named with 250 characters: its ReplicaSet's name, with "-<hash>", passes the
// 253-character limit and the create is Invalid) gives, as upstream's getNewReplicaSet,
// Progressing False ReplicaSetCreateError "Failed to create new replica set %q: <the apiserver's
// message>" written at once. (The Warning Event with the same message is not checked: an Event
// of an object with such a name is itself too long a name, refused under upstream too.)
func TestDeployment_ReplicaSetCreateError(t *testing.T) {
	dpStart(t)
	ns := Namespace(t)
	d0 := dpNew(ns, strings.Repeat("n", 250), 1)
	labels := map[string]string{"app": "rs-create-error"}
	d0.Spec.Selector.MatchLabels = labels
	d0.Spec.Template.Labels = labels
	d := dpCreate(t, d0)
	rsName := d.Name + "-" + controller.ComputeHash(&d.Spec.Template, nil)
	prefix := fmt.Sprintf("Failed to create new replica set %q: ", rsName)
	var msg string
	Eventually(t, 30*time.Second, "Progressing ReplicaSetCreateError", func() (bool, string) {
		x, err := env.Client.AppsV1().Deployments(ns).Get(context.Background(), d.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		c := dpCond(x, appsv1.DeploymentProgressing)
		if c == nil || c.Reason != "ReplicaSetCreateError" {
			return false, fmt.Sprintf("%+v", x.Status.Conditions)
		}
		msg = c.Message
		return c.Status == corev1.ConditionFalse && strings.HasPrefix(msg, prefix) &&
			strings.Contains(msg, "is invalid"), fmt.Sprintf("%s %q", c.Status, msg)
	})
}
