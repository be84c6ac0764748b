package e2e

// The object a worker syncs is a structured key of every line it logs meanwhile (issue 22:
// journald OBJECT=, component-base JSON "object"), without the controller passing it.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestKcmd_LogLinesCarryTheSyncedObject(t *testing.T) {
	p := saStart(t, "serviceaccount-controller", "--logging-format=json")
	ns := Namespace(t)
	saWaitDefault(t, ns, "")
	Eventually(t, 10*time.Second, "a JSON line of the sync of "+ns, func() (bool, string) {
		for _, l := range p.Logs() {
			i := strings.Index(l, "{")
			if i < 0 || !strings.Contains(l, "created serviceaccount "+ns+"/default") {
				continue
			}
			var line map[string]any
			if err := json.Unmarshal([]byte(l[i:]), &line); err != nil {
				return false, "not JSON: " + l
			}
			if line["object"] != ns || line["controller"] != "serviceaccount-controller" {
				return false, "keys: " + l
			}
			for _, k := range []string{"ts", "caller", "msg", "v"} {
				if _, ok := line[k]; !ok {
					return false, "no " + k + ": " + l
				}
			}
			return true, ""
		}
		return false, "no line yet"
	})
}
