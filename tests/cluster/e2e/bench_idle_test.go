package e2e

// TestBench_ManagerDefaultControllersMemory (KCMD_BENCH=1, make bench-manager): what kcmd with every
// controller it has on by default costs beside upstream kube-controller-manager running the same
// controllers, on the same small cluster (20 ReplicaSets of 10 pods, 10 CronJobs that never fire,
// 20 namespaces), one after the other: the processes, their memory (kcmd: PSS summed over the
// manager and every child; kcm: RSS and PSS of its one process) and the CPU each spent in 20 s
// of idle once the start-up work was done (kcmd creates the pods, kcm finds them).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kcmdDefaultControllers lists the controllers `kcmd --help` shows as on by default.
func kcmdDefaultControllers(t *testing.T) []string {
	out, _ := exec.Command(filepath.Join(env.KcmdBinDir, "kcmd"), "--help").CombinedOutput()
	var names []string
	in := false
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Controllers (") {
			in = true
			continue
		}
		if in && strings.TrimSpace(l) == "" {
			break
		}
		if f := strings.Fields(l); in && len(f) >= 2 && f[1] == "on" {
			names = append(names, f[0])
		}
	}
	if len(names) == 0 {
		t.Fatalf("no controllers in kcmd --help:\n%s", out)
	}
	return names
}

func benchTreePSS(pid int) (kb int64, procs int) {
	kb, procs = gcxSmaps(pid, "Pss"), 1
	for cpid := range childrenOf(pid) {
		kb += gcxSmaps(cpid, "Pss")
		procs++
	}
	return kb, procs
}

func TestBench_ManagerDefaultControllersMemory(t *testing.T) {
	if os.Getenv("KCMD_BENCH") != "1" {
		t.Skip("benchmark: run with make bench-manager")
	}
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		ns := Namespace(t)
		if _, err := env.Client.AppsV1().ReplicaSets(ns).Create(ctx, demoReplicaSet(ns, "idle", 10), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if i < 10 {
			cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "never"}, Spec: batchv1.CronJobSpec{
				Schedule: "0 0 1 1 *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
					Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}}}
			if _, err := env.Client.BatchV1().CronJobs(ns).Create(ctx, cj, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctls := kcmdDefaultControllers(t)
	t.Logf("controllers: %s", strings.Join(ctls, ","))

	// kcmd first
	p := startKcmd(t, nil, "--controllers=*", "--secure-port=0", "--leader-elect=false", "--use-service-account-credentials=false")
	Eventually(t, 60*time.Second, "kcmd's informers synced", func() (bool, string) { return p.Logged("informers synced"), "" })
	// the start-up work first (kcmd creates the 200 pods at qps 20; kcm, started second,
	// finds them), then the idle window
	Eventually(t, 120*time.Second, "200 pods", func() (bool, string) {
		l, err := env.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "app=idle"})
		if err != nil {
			return false, err.Error()
		}
		return len(l.Items) >= 200, fmt.Sprintf("%d pods", len(l.Items))
	})
	time.Sleep(15 * time.Second)
	per0 := map[int]float64{p.cmd.Process.Pid: hksCPUSeconds(p.cmd.Process.Pid)}
	for cpid := range childrenOf(p.cmd.Process.Pid) {
		per0[cpid] = hksCPUSeconds(cpid)
	}
	cpu0 := gcxTreeCPU(p.cmd.Process.Pid)
	time.Sleep(20 * time.Second)
	cpu1 := gcxTreeCPU(p.cmd.Process.Pid)
	// where kcmd's idle CPU goes, by process (its command line names the controller)
	for pid, c0 := range per0 {
		if d := hksCPUSeconds(pid) - c0; d >= 0.01 {
			cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			args := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
			name := filepath.Base(args[0])
			for _, a := range args {
				if strings.HasPrefix(a, "--controller=") {
					name += " " + a
				}
			}
			t.Logf("idle 20 s: %.2f CPU-s %s", d, name)
		}
	}
	var kpss int64
	var kprocs int
	for i := 0; i < 3; i++ {
		kb, n := benchTreePSS(p.cmd.Process.Pid)
		if kb > kpss {
			kpss, kprocs = kb, n
		}
		time.Sleep(time.Second)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done

	// then upstream, the same controllers
	kcm, err := cjLaunchKCM(strings.Join(ctls, ","))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = kcm.cmd.Process.Kill(); <-kcm.done }()
	time.Sleep(25 * time.Second) // kcm's caches sync in a second here; the same settling time
	c0 := hksCPUSeconds(kcm.cmd.Process.Pid)
	time.Sleep(20 * time.Second)
	c1 := hksCPUSeconds(kcm.cmd.Process.Pid)
	var upss, urss int64
	for i := 0; i < 3; i++ {
		if v := gcxSmaps(kcm.cmd.Process.Pid, "Pss"); v > upss {
			upss = v
		}
		if v := gcxSmaps(kcm.cmd.Process.Pid, "Rss"); v > urss {
			urss = v
		}
		time.Sleep(time.Second)
	}
	fmt.Printf("bench: manager.default_kcmd_processes %d processes\n", kprocs)
	fmt.Printf("bench: manager.default_kcmd_pss_mb %.1f MB\n", float64(kpss)/1024)
	fmt.Printf("bench: manager.default_kcm_pss_mb %.1f MB\n", float64(upss)/1024)
	fmt.Printf("bench: manager.default_kcm_rss_mb %.1f MB\n", float64(urss)/1024)
	fmt.Printf("bench: manager.default_kcmd_idle_cpu_s_per_min %.3f CPU-s\n", (cpu1-cpu0)*3)
	fmt.Printf("bench: manager.default_kcm_idle_cpu_s_per_min %.3f CPU-s\n", (c1-c0)*3)
}
