#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""CPU per kcmd process and its top symbols from tools/profile-bench.sh's output directory.

Samples are perf's cpu-clock at 499 Hz, so CPU-s = samples / 499. A process is named by its
binary and --controller (kcmd-worker:replicaset-controller, kcmd-dispatcher:...); the
kubelet simulator's processes (started at --kube-api-qps=20 or with --simulate-kubelet) are
marked SIMULATOR: they are not part of the kcmd under test. Symbols are leaf frames (self
time); libraries without symbols show as [unknown] per library.
usage: profile-summary.py DIR [TOPN]"""
import collections
import glob
import os
import re
import subprocess
import sys

HZ = 499.0


def main():
    d = sys.argv[1]
    topn = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    args = {}
    for f in sorted(glob.glob(os.path.join(d, 'ps.*'))):
        for line in open(f, errors='replace'):
            p = line.split(None, 4)
            if len(p) == 5 and p[3].startswith('kcmd'):
                args[int(p[0])] = p[4].strip()

    def kind(pid):
        a = args.get(pid, '')
        m = re.search(r'/(kcmd[-a-z]*)\s', a + ' ')
        b = m.group(1) if m else 'kcmd?'
        if b == 'kcmd-bench':
            return 'bench driver (not kcmd)'
        sim = '--kube-api-qps=20 ' in a or 'simulate-kubelet' in a
        c = re.search(r'--controller=(\S+)', a)
        return ('SIMULATOR ' if sim else '') + b + (':' + c.group(1) if c else '')

    out = subprocess.run(['perf', 'script', '-i', os.path.join(d, 'perf.data'), '-F',
                          'comm,pid,tid,ip,sym,dso', '--max-stack=1'],
                         capture_output=True, text=True, errors='replace').stdout
    n = collections.Counter()
    syms = collections.defaultdict(collections.Counter)
    dsos = collections.defaultdict(collections.Counter)
    cur = None
    for line in out.splitlines():
        if not line.strip():
            cur = None
        elif not line[0].isspace():
            m = re.match(r'(\S+)\s+(\d+)/\d+', line)
            cur = kind(int(m.group(2))) if m and int(m.group(2)) in args else None
            if cur:
                n[cur] += 1
        elif cur:
            m = re.match(r'\s*[0-9a-f]+\s+(.*)\s+\((.*)\)\s*$', line)
            if m:
                dso = os.path.basename(m.group(2))
                sym = re.sub(r'\+0x[0-9a-f]+$', '', m.group(1).strip())
                syms[cur]['%s [%s]' % (sym, dso)] += 1
                dsos[cur][dso] += 1
            cur = None
    own = sum(v for k, v in n.items() if not k.startswith(('SIMULATOR', 'bench')))
    print('kcmd under test: %.2f CPU-s (%d samples at %d Hz)' % (own / HZ, own, HZ))
    for k, v in n.most_common():
        print('\n== %-48s %6.2f CPU-s' % (k, v / HZ))
        print('   ' + ', '.join('%s %.0f%%' % (x, 100.0 * c / v)
                                for x, c in dsos[k].most_common(8)))
        for s, c in syms[k].most_common(topn):
            print('   %5.1f%%  %s' % (100.0 * c / v, s))


if __name__ == '__main__':
    main()
