/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * workers/replicaset/expectations-fault.h: test-only fault seams of the shared expectations.
 * Production code never sets them; the torture test's negative controls do, to prove that its
 * oracles catch the bug each one re-introduces.
 */
enum rs_exp_fault {
	/* count observations made for an older generation (ignore the seq tag, rule E3): the
	 * oracle must see a record satisfied before its own creations were observed */
	RS_EXP_FAULT_IGNORE_GEN = 1u << 0,
	/* no crash rule (E4): a record orphaned by a killed worker waits for the full timeout;
	 * the oracle must see an RS blocked after its worker was killed */
	RS_EXP_FAULT_NO_ORPHAN_RULE = 1u << 1,
	/* not a bug: widen the odd-seq window of every worker write (sleep 300 us inside it) so
	 * that kill -9 lands mid-write often enough to exercise the torn-record rule */
	RS_EXP_FAULT_SLOW_WRITE = 1u << 2,
	/* WroteAt keeps the consistency record live while rewriting it: a writer killed between
	 * two words leaves a torn RV; the oracle must see an RV that was never written */
	RS_EXP_FAULT_CONS_NO_GUARD = 1u << 3,
	/* a claim restarts the reused slot's seq at 0 instead of continuing it (E7): tags that
	 * informerd stamped for the previous occupant count for the new one; the oracle must see
	 * a re-created ReplicaSet's record satisfied by observations it never had */
	RS_EXP_FAULT_RESET_SEQ = 1u << 4,
};
extern unsigned rs_exp_fault_mask;
