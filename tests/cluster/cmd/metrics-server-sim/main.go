// Command metrics-server-sim runs tests/cluster/metricssim standalone: a metrics.k8s.io/v1beta1
// server whose PodMetrics come from a JSON file (a list of metricssim.Pod), re-read every 2 s.
// It prints its port; register it with an APIService pointing at an ExternalName Service
// "localhost" and that port (insecureSkipTLSVerify), as tests/cluster/e2e/hpa_test.go does.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"kcmd.local/tests/cluster/metricssim"
)

func main() {
	values := flag.String("values", "", "JSON file with a list of pods (Namespace, Name, Labels, CPUMilli)")
	flag.Parse()
	s, err := metricssim.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(s.Port())
	for {
		if *values != "" {
			if b, err := os.ReadFile(*values); err == nil {
				var pods []metricssim.Pod
				if json.Unmarshal(b, &pods) == nil {
					for _, p := range pods {
						s.Set(p)
					}
				}
			}
		}
		time.Sleep(2 * time.Second)
	}
}
