/* SPDX-License-Identifier: Apache-2.0 */
/* kube/fuzz/fuzz-kubeconfig.c - the kubeconfig loader on arbitrary bytes (written to a temp file,
 * loaded as --kubeconfig). Invariants: no crash or leak; an error always comes with a message. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/fuzz-kubeconfig-%d.yaml", (int)getpid());
	FILE *f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	struct kube_config_opts o = {.kubeconfig = path,
	                             .kubeconfig_env = "",
	                             .home = "/nonexistent",
	                             .no_in_cluster = true};
	struct kube_config *c = NULL;
	char err[512] = "";
	int r = kube_config_load(&o, &c, err, sizeof(err));
	if (r == 0)
		kube_config_free(c);
	else if (r == -EINVAL && !err[0])
		abort();
	o.context = "x";
	if (kube_config_load(&o, &c, err, sizeof(err)) == 0)
		kube_config_free(c);
	return 0;
}
