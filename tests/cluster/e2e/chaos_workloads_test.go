// SPDX-License-Identifier: Apache-2.0

package e2e

// The chaos suite's workload churn (issue 21: "churn over every controller kcmd runs"): beside
// the ReplicaSet and GC churn of chaos_test.go, Deployments are created, scaled, rolled out to a
// new template and deleted, and Jobs are created and deleted, while the faults run. There is no
// kubelet in the chaos cluster: pods never become Ready, so the Deployments roll with Recreate
// or with RollingUpdate maxSurge 0 / maxUnavailable 100% (neither waits on availability), and
// a goroutine of the test plays the kubelet for Job pods (marks each Succeeded through the
// status subresource).
//
// Oracles after the settle (on top of the two-leader audit check, which covers every write):
//   - Deployment: observedGeneration current, status.replicas == updatedReplicas ==
//     spec.replicas, collisionCount unset (a kill between a ReplicaSet's create and the status
//     write must not be taken for a hash collision), exactly one owned ReplicaSet with the
//     latest template and spec.replicas, every other owned one at 0 with no active pod, at
//     most revisionHistoryLimit (2) of those left when the Deployment is complete (upstream
//     cleans up history only then; with no Ready pods, at 0 replicas), exactly spec.replicas
//     active pods, all owned by the new ReplicaSet;
//   - Job: Complete, status.succeeded == completions, failed 0, no pod left carrying the
//     job-tracking finalizer, and no over-creation: the pods ever seen (watch) controlled by
//     the Job's uid do not exceed its completions (none of its pods fails).

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

const chaosJobFinalizer = "batch.kubernetes.io/job-tracking"

type chaosWork struct {
	mu      sync.Mutex
	ns      string
	depRepl map[string]int32 // Deployment name -> last spec.replicas written
	depVer  map[string]int   // Deployment name -> template version last written
	jobs    map[string]int32 // Job name -> completions
	jobUID  map[string]types.UID
	next    int
	ops     int
}

func newChaosWork(ns string) *chaosWork {
	return &chaosWork{ns: ns, depRepl: map[string]int32{}, depVer: map[string]int{},
		jobs: map[string]int32{}, jobUID: map[string]types.UID{}}
}

func chaosPodSpec(ver int) corev1.PodSpec {
	return corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](0),
		Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
			Env: []corev1.EnvVar{{Name: "VERSION", Value: strconv.Itoa(ver)}}}},
	}
}

func chaosDeployment(ns, name string, replicas int32, ver int, recreate bool) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas:             ptr.To(replicas),
			RevisionHistoryLimit: ptr.To[int32](2),
			Selector:             &metav1.LabelSelector{MatchLabels: map[string]string{"chaos-dep": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"chaos-dep": name}},
				Spec:       chaosPodSpec(ver),
			},
		},
	}
	if recreate {
		d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	} else {
		zero, all := intstr.FromInt32(0), intstr.FromString("100%")
		d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &zero, MaxUnavailable: &all}}
	}
	return d
}

func (w *chaosWork) createDeployment(ctx context.Context, replicas int32) error {
	w.mu.Lock()
	name := fmt.Sprintf("dep-%03d", w.next)
	recreate := w.next%2 == 0
	w.next++
	w.mu.Unlock()
	err := chaosRetry(func() error {
		_, err := env.Client.AppsV1().Deployments(w.ns).Create(ctx, chaosDeployment(w.ns, name, replicas, 0, recreate), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) { // a retried create that had landed
			err = nil
		}
		return err
	})
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.depRepl[name], w.depVer[name] = replicas, 0
	w.mu.Unlock()
	return nil
}

// updateDeployment sets spec.replicas (replicas >= 0) or rolls the template to a new version.
func (w *chaosWork) updateDeployment(ctx context.Context, name string, replicas int32, roll bool) error {
	return chaosRetry(func() error {
		d, err := env.Client.AppsV1().Deployments(w.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		w.mu.Lock()
		ver := w.depVer[name]
		w.mu.Unlock()
		if roll {
			ver++
			d.Spec.Template.Spec = chaosPodSpec(ver)
		} else {
			d.Spec.Replicas = ptr.To(replicas)
		}
		if _, err := env.Client.AppsV1().Deployments(w.ns).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
			return err
		}
		w.mu.Lock()
		w.depVer[name] = ver
		w.depRepl[name] = *d.Spec.Replicas
		w.mu.Unlock()
		return nil
	})
}

func (w *chaosWork) deleteObj(ctx context.Context, name string, job bool) error {
	bg := metav1.DeletePropagationBackground
	err := chaosRetry(func() error {
		if job {
			return env.Client.BatchV1().Jobs(w.ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg})
		}
		return env.Client.AppsV1().Deployments(w.ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg})
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	w.mu.Lock()
	if job {
		delete(w.jobs, name)
	} else {
		delete(w.depRepl, name)
		delete(w.depVer, name)
	}
	w.mu.Unlock()
	return nil
}

func (w *chaosWork) createJob(ctx context.Context, completions int32) error {
	w.mu.Lock()
	name := fmt.Sprintf("job-%03d", w.next)
	w.next++
	w.mu.Unlock()
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: batchv1.JobSpec{
			Completions: ptr.To(completions), Parallelism: ptr.To[int32](2), BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"chaos-job": name}},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
	var got *batchv1.Job
	err := chaosRetry(func() error {
		var err error
		got, err = env.Client.BatchV1().Jobs(w.ns).Create(ctx, j, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			got, err = env.Client.BatchV1().Jobs(w.ns).Get(ctx, name, metav1.GetOptions{})
		}
		return err
	})
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.jobs[name], w.jobUID[name] = completions, got.UID
	w.mu.Unlock()
	return nil
}

// step is one random workload operation.
func (w *chaosWork) step(ctx context.Context, rng *rand.Rand) error {
	w.mu.Lock()
	var deps, jobs []string
	for n := range w.depRepl {
		deps = append(deps, n)
	}
	for n := range w.jobs {
		jobs = append(jobs, n)
	}
	w.ops++
	w.mu.Unlock()
	sort.Strings(deps)
	sort.Strings(jobs)
	switch k := rng.Intn(10); {
	case k < 3 && len(deps) > 0:
		return w.updateDeployment(ctx, deps[rng.Intn(len(deps))], int32(rng.Intn(5)), false)
	case k < 6 && len(deps) > 0:
		return w.updateDeployment(ctx, deps[rng.Intn(len(deps))], 0, true)
	case k < 7 && len(deps) > 3:
		if err := w.deleteObj(ctx, deps[rng.Intn(len(deps))], false); err != nil {
			return err
		}
		return w.createDeployment(ctx, int32(rng.Intn(4)))
	case k < 9 && len(jobs) < 8:
		return w.createJob(ctx, int32(2+rng.Intn(4)))
	case len(jobs) > 4:
		return w.deleteObj(ctx, jobs[rng.Intn(len(jobs))], true)
	default:
		return w.createDeployment(ctx, int32(rng.Intn(4)))
	}
}

// playKubelet marks the active pods of the Jobs Succeeded until stop is closed.
func (w *chaosWork) playKubelet(ctx context.Context, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(300 * time.Millisecond):
		}
		pods, err := env.Client.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{LabelSelector: "chaos-job"})
		if err != nil {
			continue
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if !isActive(p) {
				continue
			}
			now := metav1.Now()
			p.Status.Phase = corev1.PodSucceeded
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Image: "registry.k8s.io/pause:3.10",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed",
					StartedAt: now, FinishedAt: now}}}}
			_, _ = env.Client.CoreV1().Pods(w.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		}
	}
}

// problems lists what differs from the workloads' exact end state.
func (w *chaosWork) problems(ctx context.Context, tr *hrtTracker) []string {
	var probs []string
	w.mu.Lock()
	depRepl, depVer, jobs, jobUID := map[string]int32{}, map[string]int{}, map[string]int32{}, map[string]types.UID{}
	for k, v := range w.depRepl {
		depRepl[k], depVer[k] = v, w.depVer[k]
	}
	for k, v := range w.jobs {
		jobs[k], jobUID[k] = v, w.jobUID[k]
	}
	w.mu.Unlock()
	rss, err := env.Client.AppsV1().ReplicaSets(w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	pods, err := env.Client.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{err.Error()}
	}
	for name, repl := range depRepl {
		d, err := env.Client.AppsV1().Deployments(w.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			probs = append(probs, fmt.Sprintf("deployment %s: %v", name, err))
			continue
		}
		st := d.Status
		if st.ObservedGeneration != d.Generation || st.Replicas != repl || st.UpdatedReplicas != repl {
			probs = append(probs, fmt.Sprintf("deployment %s: generation %d observed %d, replicas %d updated %d, want %d",
				name, d.Generation, st.ObservedGeneration, st.Replicas, st.UpdatedReplicas, repl))
		}
		if st.CollisionCount != nil && *st.CollisionCount != 0 {
			probs = append(probs, fmt.Sprintf("deployment %s: collisionCount %d (no template ever collided)", name, *st.CollisionCount))
		}
		var cur *appsv1.ReplicaSet
		old := 0
		for i := range rss.Items {
			rs := &rss.Items[i]
			if ref := metav1.GetControllerOf(rs); ref == nil || ref.UID != d.UID {
				continue
			}
			if rs.Spec.Template.Spec.Containers[0].Env[0].Value == strconv.Itoa(depVer[name]) {
				if cur != nil {
					probs = append(probs, fmt.Sprintf("deployment %s: two ReplicaSets with the latest template: %s, %s", name, cur.Name, rs.Name))
				}
				cur = rs
				continue
			}
			old++
			if *rs.Spec.Replicas != 0 {
				probs = append(probs, fmt.Sprintf("deployment %s: old ReplicaSet %s at %d replicas", name, rs.Name, *rs.Spec.Replicas))
			}
		}
		if cur == nil {
			probs = append(probs, fmt.Sprintf("deployment %s: no ReplicaSet with template version %d", name, depVer[name]))
			continue
		}
		if *cur.Spec.Replicas != repl {
			probs = append(probs, fmt.Sprintf("deployment %s: new ReplicaSet %s at %d, want %d", name, cur.Name, *cur.Spec.Replicas, repl))
		}
		// history is cleaned up only once the Deployment is complete (all replicas available):
		// with no kubelet, only at 0 replicas
		if old > 2 && repl == 0 {
			probs = append(probs, fmt.Sprintf("deployment %s: %d old ReplicaSets kept, revisionHistoryLimit 2", name, old))
		}
		active, stray := 0, 0
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.Labels["chaos-dep"] != name || !isActive(p) {
				continue
			}
			if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == cur.UID {
				active++
			} else {
				stray++
			}
		}
		if active != int(repl) || stray != 0 {
			probs = append(probs, fmt.Sprintf("deployment %s: %d active pods of the new ReplicaSet and %d others, want %d", name, active, stray, repl))
		}
	}
	for name, comp := range jobs {
		j, err := env.Client.BatchV1().Jobs(w.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			probs = append(probs, fmt.Sprintf("job %s: %v", name, err))
			continue
		}
		complete := false
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				complete = true
			}
		}
		if !complete || j.Status.Succeeded != comp || j.Status.Failed != 0 {
			probs = append(probs, fmt.Sprintf("job %s: complete %v, succeeded %d failed %d, want %d succeeded", name, complete,
				j.Status.Succeeded, j.Status.Failed, comp))
		}
		if c := tr.Created(jobUID[name]); c > int(comp) {
			probs = append(probs, fmt.Sprintf("job %s: over-creation: %d pods created for %d completions", name, c, comp))
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == j.UID {
				for _, f := range p.Finalizers {
					if f == chaosJobFinalizer {
						probs = append(probs, fmt.Sprintf("job %s: pod %s keeps the tracking finalizer", name, p.Name))
					}
				}
			}
		}
	}
	return probs
}

func (w *chaosWork) counts() (deps, jobs, ops int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.depRepl), len(w.jobs), w.ops
}
