/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/worker.h: the worker interface for in-tree controllers. The interface itself is public
 * (kcmd/worker.h, installed); this header adds the internal headers the in-tree controllers use
 * beside it (the loop, the API client, the arena).
 */
#include "ipc/loop.h"
#include "kcmd/worker.h"
#include "kube/client.h"
#include "shm/arena.h"
