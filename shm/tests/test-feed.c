/* SPDX-License-Identifier: Apache-2.0 */
/* shm/tests/test-feed.c - cmocka units for the change feed (shm/feed.h): round trips of every
 * op, publish errors, exact lap detection at the boundary, pads, seq and position wraparound,
 * bad and corrupt headers and entries, version mismatch, seals, the writer lock, writer restart
 * and a kill at every publication step, blocking waits, an io_uring FUTEX_WAIT on the feed's
 * word, drain, and giving ring pages back (F7: the slowest registered reader holds them, a
 * punched page reads as a lap, dead readers' slots, slot exhaustion). */
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <liburing.h>

#include "shm/feed-abi.h"
#include "shm/feed-test.h"
#include "shm/feed.h"
#include "shm/tests/feed-oracle.h"

static struct fo_buf fb, scratch;

static int new_feed(uint64_t ring, uint64_t first_seq, uint64_t first_pos)
{
	int fd;
	struct shm_feed_create_opts o = {
	        .ring_size = ring, .first_seq = first_seq, .first_pos = first_pos};
	assert_int_equal(shm_feed_create(&o, &fd), 0);
	return fd;
}

static uint64_t pub_gen(struct shm_feed *w, uint64_t seq, uint64_t gen)
{
	uint64_t got = 0;
	fo_build(seq, gen, &fb);
	assert_int_equal(shm_feed_publish(w, &fb.pub, &got), 0);
	assert_true(got == seq);
	return got;
}

static uint64_t next_seq(struct shm_feed *w)
{
	struct shm_feed_stats st;
	assert_int_equal(shm_feed_stats(w, &st), 0);
	return st.position;
}

static void pub_next(struct shm_feed *w, uint64_t gen)
{
	pub_gen(w, next_seq(w), gen);
}

static void setup_flags(void)
{
	shm_feed__test_flags = 0;
	shm_feed__test_crash_step = 0;
	fo_words = 40;
}

/* ---- round trips ----------------------------------------------------------------------------- */
static void test_roundtrip_every_op(void **state)
{
	(void)state;
	setup_flags();
	int fd = new_feed(0, 0, 0), ro;
	assert_int_equal(shm_feed_reader_fd(fd, &ro), 0);
	struct shm_feed *w, *r;
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	assert_int_equal(shm_feed_reader_open(ro, &r), 0);
	struct shm_feed_stats st;
	assert_int_equal(shm_feed_stats(w, &st), 0);
	assert_true(st.ring_size == UINT64_C(64) << 20 && st.max_entry == UINT64_C(16) << 20);
	assert_true(st.last_pos == SHM_FEED_ABI_NO_POS && st.incarnation == 1);

	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	assert_int_equal(shm_feed_next(r, &ev), 0);
	assert_int_equal(shm_feed_pending(r), 0);
	assert_true(shm_feed_position(r) == 1 && shm_feed_lag(r) == 0);
	bool seen[4] = {0}, tomb = false, no_old = false;
	for (uint64_t s = 1; s <= 200; s++)
		pub_gen(w, s, 3);
	assert_true(shm_feed_lag(r) == 200);
	assert_int_equal(shm_feed_pending(r), 1);
	for (uint64_t s = 1; s <= 200; s++) {
		assert_int_equal(shm_feed_next(r, &ev), 1);
		assert_true(ev.seq == s);
		assert_true(fo_check(&ev, &scratch));
		seen[ev.op] = true;
		tomb |= (ev.flags & SHM_FEED_TOMBSTONE) != 0;
		no_old |= ev.op == SHM_FEED_UPDATE && !ev.old_obj;
		if (ev.op == SHM_FEED_DELETE)
			assert_null(ev.new_obj);
		if (ev.op == SHM_FEED_ADD)
			assert_null(ev.old_obj);
	}
	assert_true(seen[1] && seen[2] && seen[3] && tomb && no_old);
	assert_int_equal(shm_feed_next(r, &ev), 0);
	assert_true(shm_feed_position(r) == 201 && shm_feed_lag(r) == 0);

	/* a hand-made entry: every field as given, NULL ns = "" */
	struct shm_label lab[] = {{"app", "web"}, {"pod-template-hash", "abc"}};
	struct shm_owner_ref own[] = {{"apps/v1", "ReplicaSet", "web-1", "u-1", 1, -1}};
	uint8_t pl[13] = "hello payload";
	struct shm_record_in in = {.type = 9,
	                           .kind = SHM_RECORD_POD,
	                           .ns = NULL,
	                           .name = "p",
	                           .uid = "u-2",
	                           .rv = "77",
	                           .labels = lab,
	                           .n_labels = 2,
	                           .owners = own,
	                           .n_owners = 1,
	                           .payload = pl,
	                           .payload_len = sizeof(pl)};
	uint64_t seq;
	assert_int_equal(shm_feed_publish(w,
	                                  &(struct shm_feed_pub){.op = SHM_FEED_ADD,
	                                                         .type = 9,
	                                                         .handle = 42,
	                                                         .flags = SHM_FEED_RELIST,
	                                                         .arena_seq = 5,
	                                                         .new_obj = &in},
	                                  &seq),
	                 0);
	assert_true(seq == 201);
	assert_int_equal(shm_feed_next(r, &ev), 1);
	assert_true(ev.op == SHM_FEED_ADD && ev.type == 9 && ev.handle == 42 &&
	            ev.flags == SHM_FEED_RELIST && ev.arena_seq == 5);
	assert_string_equal(ev.new_obj->ns, "");
	assert_string_equal(ev.new_obj->name, "p");
	assert_string_equal(ev.new_obj->rv, "77");
	assert_int_equal(ev.new_obj->n_labels, 2);
	assert_string_equal(ev.new_obj->labels[1].key, "pod-template-hash");
	assert_string_equal(shm_obj_label(ev.new_obj, "app"), "web");
	assert_string_equal(shm_obj_controller(ev.new_obj)->name, "web-1");
	assert_int_equal(ev.new_obj->owners[0].block_owner_deletion, -1);
	assert_int_equal(ev.new_obj->payload_len, sizeof(pl));
	assert_memory_equal(ev.new_obj->payload, pl, sizeof(pl));
	assert_int_equal(ev.new_obj->handle, 42);
	assert_int_equal(ev.new_obj->type, 9);
	assert_int_equal(ev.new_obj->kind, SHM_RECORD_POD);

	shm_feed_event_release(&ev);
	shm_feed_close(r);
	shm_feed_close(w);
	close(ro);
	close(fd);
}

static void test_publish_errors(void **state)
{
	(void)state;
	setup_flags();
	int fd = new_feed(64 << 10, 0, 0);
	struct shm_feed *w, *r;
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	assert_int_equal(shm_feed_reader_open(fd, &r), 0);
	struct shm_record_in in = {.name = "a", .uid = "u", .rv = "1"};
	struct shm_obj old = {.ns = "", .name = "a", .uid = "u", .rv = "0"};
	struct shm_feed_pub p = {.op = SHM_FEED_ADD, .new_obj = &in};
	assert_int_equal(shm_feed_publish(w, &p, NULL), 0);
	/* ops, flags, objects per op */
	p.op = 0;
	assert_int_equal(shm_feed_publish(w, &p, NULL), -EINVAL);
	p.op = 4;
	assert_int_equal(shm_feed_publish(w, &p, NULL), -EINVAL);
	p = (struct shm_feed_pub){.op = SHM_FEED_ADD, .new_obj = &in, .flags = 0x80};
	assert_int_equal(shm_feed_publish(w, &p, NULL), -EINVAL);
	p = (struct shm_feed_pub){.op = SHM_FEED_ADD, .new_obj = &in, .old_obj = &old};
	assert_int_equal(shm_feed_publish(w, &p, NULL), -EINVAL);
	p = (struct shm_feed_pub){.op = SHM_FEED_UPDATE};
	assert_int_equal(shm_feed_publish(w, &p, NULL), -EINVAL);
	p = (struct shm_feed_pub){.op = SHM_FEED_DELETE, .new_obj = &in};
	assert_int_equal(shm_feed_publish(w, &p, NULL), -EINVAL);
	p = (struct shm_feed_pub){.op = SHM_FEED_DELETE, .flags = SHM_FEED_TOMBSTONE};
	assert_int_equal(shm_feed_publish(w, &p, NULL), -EINVAL); /* tombstone needs old */
	p = (struct shm_feed_pub){.op = SHM_FEED_UPDATE,
	                          .new_obj = &in,
	                          .flags = SHM_FEED_TOMBSTONE,
	                          .old_obj = &old};
	assert_int_equal(shm_feed_publish(w, &p, NULL), -EINVAL); /* tombstone only on delete */
	p = (struct shm_feed_pub){.op = SHM_FEED_ADD, .new_obj = &in, .flags = SHM_FEED_DROPPED};
	assert_int_equal(shm_feed_publish(w, &p, NULL), -EINVAL); /* dropped only on delete */
	/* objects */
	p = (struct shm_feed_pub){.op = SHM_FEED_ADD, .new_obj = &in};
	in.rv = NULL;
	assert_int_equal(shm_feed_publish(w, &p, NULL), -EINVAL);
	in.rv = "1";
	struct shm_owner_ref bad = {"v1", "K", "n", "u", 2, 0};
	in.owners = &bad;
	in.n_owners = 1;
	assert_int_equal(shm_feed_publish(w, &p, NULL), -EINVAL);
	in.n_owners = 0;
	in.payload_len = 8; /* no payload pointer */
	assert_int_equal(shm_feed_publish(w, &p, NULL), -EINVAL);
	static char big[70000];
	memset(big, 'x', sizeof(big) - 1);
	in.payload_len = 0;
	in.name = big; /* over 65535 */
	assert_int_equal(shm_feed_publish(w, &p, NULL), -EINVAL);
	in.name = "a";
	static uint8_t pl[20000]; /* > max_entry = 16 KiB */
	in.payload = pl;
	in.payload_len = sizeof(pl);
	assert_int_equal(shm_feed_publish(w, &p, NULL), -EMSGSIZE);
	in.payload_len = 16000; /* fits */
	assert_int_equal(shm_feed_publish(w, &p, NULL), 0);
	/* a reader refuses to publish, a writer to read */
	assert_int_equal(shm_feed_publish(r, &p, NULL), -EINVAL);
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	assert_int_equal(shm_feed_next(w, &ev), -EINVAL);
	assert_int_equal(shm_feed_seek_end(w, NULL), -EINVAL);
	/* the failed calls consumed no seq */
	assert_int_equal(shm_feed_next(r, &ev), 1);
	assert_true(ev.seq == 1);
	assert_int_equal(shm_feed_next(r, &ev), 1);
	assert_true(ev.seq == 2 && ev.new_obj->payload_len == 16000);
	assert_int_equal(shm_feed_next(r, &ev), 0);
	/* a drop (issue 21): a DELETE that is not a deletion, flag delivered */
	p = (struct shm_feed_pub){.op = SHM_FEED_DELETE, .flags = SHM_FEED_DROPPED};
	assert_int_equal(shm_feed_publish(w, &p, NULL), 0);
	assert_int_equal(shm_feed_next(r, &ev), 1);
	assert_true(ev.op == SHM_FEED_DELETE && (ev.flags & SHM_FEED_DROPPED));
	shm_feed_event_release(&ev);
	shm_feed_close(r);
	shm_feed_close(w);
	close(fd);
}

static void test_create_opts(void **state)
{
	(void)state;
	int fd;
	assert_int_equal(shm_feed_create(&(struct shm_feed_create_opts){.ring_size = 1000}, &fd),
	                 -EINVAL);
	assert_int_equal(
	        shm_feed_create(&(struct shm_feed_create_opts){.ring_size = UINT64_C(1) << 41},
	                        &fd),
	        -EINVAL);
	assert_int_equal(shm_feed_create(NULL, NULL), -EINVAL);
	/* rounded up to a power of two */
	assert_int_equal(shm_feed_create(&(struct shm_feed_create_opts){.ring_size = 100000}, &fd),
	                 0);
	struct shm_feed *r;
	assert_int_equal(shm_feed_reader_open(fd, &r), 0);
	struct shm_feed_stats st;
	shm_feed_stats(r, &st);
	assert_true(st.ring_size == 131072 && st.max_entry == 32768);
	/* sealed: no resize, no new seals */
	int seals = fcntl(fd, F_GET_SEALS);
	assert_true((seals & (F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL)) ==
	            (F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL));
	assert_int_not_equal(ftruncate(fd, 4096), 0);
	assert_int_not_equal(ftruncate(fd, 1 << 20), 0);
	/* the reader descriptor cannot be mapped writable */
	int ro;
	assert_int_equal(shm_feed_reader_fd(fd, &ro), 0);
	assert_true(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0) == MAP_FAILED);
	assert_int_equal(errno, EACCES);
	uint32_t v = 0;
	assert_int_equal(shm_feed_version(ro, &v), 0);
	assert_int_equal(v, SHM_FEED_ABI_VERSION);
	shm_feed_close(r);
	close(ro);
	close(fd);
}

/* ---- laps ------------------------------------------------------------------------------------ */
/* Publish entries of the same (seq, gen) sequence into a fresh 64 KiB feed until tail passes
 * the first entry; returns how many were published before that. */
static uint64_t entries_before_lap(void)
{
	int fd = new_feed(64 << 10, 0, 0);
	struct shm_feed *w;
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	uint64_t n = 0;
	struct shm_feed_stats st;
	for (;;) {
		pub_next(w, 1);
		shm_feed_stats(w, &st);
		if ((int64_t)(st.tail - 0) > 0)
			break;
		n++;
	}
	shm_feed_close(w);
	close(fd);
	return n;
}

static void test_lap_exact(void **state)
{
	(void)state;
	setup_flags();
	uint64_t n = entries_before_lap();
	assert_true(n > 10);
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	for (int lapped = 0; lapped <= 1; lapped++) {
		int fd = new_feed(64 << 10, 0, 0);
		struct shm_feed *w, *r;
		assert_int_equal(shm_feed_writer_open(fd, &w), 0);
		assert_int_equal(shm_feed_reader_open(fd, &r), 0);
		for (uint64_t i = 0; i < n + (uint64_t)lapped; i++)
			pub_next(w, 1);
		if (!lapped) { /* one entry short of the lap: everything is intact */
			for (uint64_t s = 1; s <= n; s++) {
				assert_int_equal(shm_feed_next(r, &ev), 1);
				assert_true(ev.seq == s && fo_check(&ev, &scratch));
			}
			assert_int_equal(shm_feed_next(r, &ev), 0);
		} else { /* the first entry's slot is being reused: reported, sticky */
			assert_int_equal(shm_feed_next(r, &ev), -ESTALE);
			assert_int_equal(shm_feed_next(r, &ev), -ESTALE);
			assert_int_equal(shm_feed_pending(r), 1);
			uint64_t s;
			assert_int_equal(shm_feed_seek_end(r, &s), 0);
			assert_true(s == n + 2);
			assert_int_equal(shm_feed_next(r, &ev), 0);
			pub_next(w, 1);
			assert_int_equal(shm_feed_next(r, &ev), 1);
			assert_true(ev.seq == n + 2 && fo_check(&ev, &scratch));
		}
		shm_feed_close(r);
		shm_feed_close(w);
		close(fd);
	}
	shm_feed_event_release(&ev);
}

/* A reader lapped in the middle of the ring, many times over, with pads. */
static void test_lap_midway_and_pads(void **state)
{
	(void)state;
	setup_flags();
	fo_words = 300; /* up to 2.4 KiB per object: pads are frequent */
	int fd = new_feed(64 << 10, 0, 0);
	struct shm_feed *w, *r, *slow;
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	assert_int_equal(shm_feed_reader_open(fd, &r), 0);
	assert_int_equal(shm_feed_reader_open(fd, &slow), 0);
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	uint64_t laps = 0, got = 0, expect = 1;
	for (int round = 0; round < 2000; round++) {
		pub_next(w, 2);
		int x = shm_feed_next(r, &ev); /* keeps up */
		assert_int_equal(x, 1);
		assert_true(fo_check(&ev, &scratch));
		if (round % 80 == 0 || round % 80 == 15) { /* the slow one: sometimes lapped */
			for (;;) {
				x = shm_feed_next(slow, &ev);
				if (x == 0)
					break;
				if (x == -ESTALE) {
					laps++;
					assert_int_equal(shm_feed_seek_end(slow, &expect), 0);
					continue;
				}
				assert_int_equal(x, 1);
				assert_true(ev.seq == expect && fo_check(&ev, &scratch));
				expect++;
				got++;
			}
		}
	}
	struct shm_feed_stats st;
	shm_feed_stats(w, &st);
	assert_true(st.pads > 10);
	print_message("laps %llu got %llu pads %llu\n", (unsigned long long)laps,
	              (unsigned long long)got, (unsigned long long)st.pads);
	assert_true(laps > 10 && got > 100);
	shm_feed_event_release(&ev);
	shm_feed_close(slow);
	shm_feed_close(r);
	shm_feed_close(w);
	close(fd);
}

/* Sequence numbers wrap from UINT64_MAX to 1 (0 is never used) and byte positions wrap past
 * 2^64; lap detection keeps working across both. */
static void test_wraparound(void **state)
{
	(void)state;
	setup_flags();
	uint64_t first = UINT64_MAX - 50, pos0 = UINT64_MAX - 100000;
	int fd = new_feed(64 << 10, first, pos0);
	struct shm_feed *w, *r, *slow;
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	assert_int_equal(shm_feed_reader_open(fd, &r), 0);
	assert_int_equal(shm_feed_reader_open(fd, &slow), 0);
	assert_true(shm_feed_position(r) == first);
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	uint64_t expect = first;
	bool seen_max = false, seen_one = false;
	int slow_laps = 0;
	for (int i = 0; i < 3000; i++) {
		uint64_t s = next_seq(w);
		assert_true(s != 0);
		pub_gen(w, s, 1);
		assert_int_equal(shm_feed_next(r, &ev), 1);
		assert_true(ev.seq == expect && fo_check(&ev, &scratch));
		seen_max |= ev.seq == UINT64_MAX;
		seen_one |= ev.seq == 1;
		expect = expect == UINT64_MAX ? 1 : expect + 1;
		if (i == 2999) {
			int x = shm_feed_next(slow, &ev);
			if (x == -ESTALE)
				slow_laps++;
		}
	}
	assert_true(seen_max && seen_one);
	assert_int_equal(slow_laps, 1);
	struct shm_feed_stats st;
	shm_feed_stats(w, &st);
	assert_true(st.last_pos < pos0); /* the positions wrapped too */
	/* the writer recovers across the wrap */
	shm_feed_close(w);
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	assert_true(next_seq(w) == expect);
	pub_gen(w, expect, 2);
	assert_int_equal(shm_feed_next(r, &ev), 1);
	assert_true(ev.seq == expect && fo_check(&ev, &scratch));
	shm_feed_event_release(&ev);
	shm_feed_close(slow);
	shm_feed_close(r);
	shm_feed_close(w);
	close(fd);
}

/* ---- bad input ------------------------------------------------------------------------------- */
static void test_bad_headers(void **state)
{
	(void)state;
	struct shm_feed *f;
	/* not a feed: empty, short, random */
	int m = memfd_create("x", MFD_CLOEXEC);
	assert_int_equal(shm_feed_reader_open(m, &f), -EBADMSG);
	assert_int_equal(ftruncate(m, 100), 0);
	assert_int_equal(shm_feed_reader_open(m, &f), -EBADMSG);
	assert_int_equal(ftruncate(m, 4096 + (64 << 10)), 0);
	assert_int_equal(shm_feed_reader_open(m, &f), -EBADMSG);
	assert_int_equal(shm_feed_writer_open(m, &f), -EBADMSG);
	uint32_t v;
	assert_int_equal(shm_feed_version(m, &v), -EBADMSG);
	close(m);
	assert_int_equal(shm_feed_reader_open(-1, &f), -EINVAL);

	struct {
		size_t off;
		uint64_t val;
		int width;
		int want;
	} cases[] = {
	        {offsetof(struct shm_feed_abi_header, version), SHM_FEED_ABI_VERSION + 1, 4,
	         -EPROTONOSUPPORT},
	        {offsetof(struct shm_feed_abi_header, header_size), 64, 4, -EPROTONOSUPPORT},
	        {offsetof(struct shm_feed_abi_header, magic), 1, 8, -EBADMSG},
	        {offsetof(struct shm_feed_abi_header, ring_size), 128 << 10, 8, -EBADMSG},
	        {offsetof(struct shm_feed_abi_header, ring_size), (64 << 10) + 16, 8, -EBADMSG},
	        {offsetof(struct shm_feed_abi_header, ring_off), 4096, 8, -EBADMSG},
	        {offsetof(struct shm_feed_abi_header, max_entry), 1 << 20, 8, -EBADMSG},
	        {offsetof(struct shm_feed_abi_header, first_seq), 0, 8, -EBADMSG},
	        {offsetof(struct shm_feed_abi_header, first_pos), 8, 8, -EBADMSG},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int fd = new_feed(64 << 10, 0, 0);
		assert_int_equal(
		        pwrite(fd, &cases[i].val, (size_t)cases[i].width, (off_t)cases[i].off),
		        cases[i].width);
		assert_int_equal(shm_feed_reader_open(fd, &f), cases[i].want);
		assert_int_equal(shm_feed_writer_open(fd, &f), cases[i].want);
		if (cases[i].want == -EPROTONOSUPPORT && cases[i].width == 4 &&
		    cases[i].off == offsetof(struct shm_feed_abi_header, version)) {
			assert_int_equal(shm_feed_version(fd, &v), 0);
			assert_int_equal(v, SHM_FEED_ABI_VERSION + 1);
		}
		close(fd);
	}
}

/* Corrupt rings: a reader reports -EBADMSG (never faults, never delivers, stays put), a writer
 * -EUCLEAN when the damage is in what recovery reads. */
static void test_corrupt_entries(void **state)
{
	(void)state;
	setup_flags();
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	const off_t ring = SHM_FEED_ABI_RING_OFF;
	enum {
		LEN_HUGE,
		LEN_ODD,
		LEN_SHORT,
		OBJ_LEN,
		OBJ_STR,
		OP_BAD,
		WORD0_JUNK,
		HINT_BAD,
		NCASE
	};
	for (int c = 0; c < NCASE; c++) {
		int fd = new_feed(64 << 10, 0, 0);
		struct shm_feed *w, *r, *r2;
		assert_int_equal(shm_feed_writer_open(fd, &w), 0);
		assert_int_equal(shm_feed_reader_open(fd, &r), 0);
		struct shm_record_in in = {.name = "abc", .uid = "u", .rv = "1"};
		assert_int_equal(
		        shm_feed_publish(w,
		                         &(struct shm_feed_pub){.op = SHM_FEED_ADD, .new_obj = &in},
		                         NULL),
		        0);
		shm_feed_close(w);
		uint32_t len, u32;
		uint64_t u64;
		assert_int_equal(pread(fd, &len, 4, ring + 8), 4);
		bool writer_fails = true;
		switch (c) {
		case LEN_HUGE: /* word 1: len beyond max_entry and the ring */
			u32 = 1u << 30;
			assert_int_equal(pwrite(fd, &u32, 4, ring + 8), 4);
			break;
		case LEN_ODD:
			u32 = len + 8;
			assert_int_equal(pwrite(fd, &u32, 4, ring + 8), 4);
			break;
		case LEN_SHORT:
			u32 = 16;
			assert_int_equal(pwrite(fd, &u32, 4, ring + 8), 4);
			break;
		case OBJ_LEN: /* the object's own length disagrees with the entry's */
			u32 = 4096;
			assert_int_equal(pwrite(fd, &u32, 4, ring + 48), 4);
			writer_fails = false;
			break;
		case OBJ_STR: /* name_len runs past the object */
			u32 = 0xffff0000u;
			assert_int_equal(pwrite(fd, &u32, 4, ring + 48 + 8), 4);
			writer_fails = false;
			break;
		case OP_BAD:
			u32 = 7;
			assert_int_equal(pwrite(fd, &u32, 1, ring + 12), 1);
			writer_fails = false;
			break;
		case WORD0_JUNK: /* the next entry's word 0 is neither 0 nor its seq */
			assert_int_equal(shm_feed_next(r, &ev), 1);
			u64 = 12345;
			assert_int_equal(pwrite(fd, &u64, 8, ring + len), 8);
			break;
		case HINT_BAD:
			u64 = 8;
			assert_int_equal(
			        pwrite(fd, &u64, 8, offsetof(struct shm_feed_abi_header, last_pos)),
			        8);
			assert_int_equal(shm_feed_reader_open(fd, &r2), -EBADMSG);
			break;
		}
		if (c != HINT_BAD) {
			assert_int_equal(shm_feed_next(r, &ev), -EBADMSG);
			assert_int_equal(shm_feed_next(r, &ev), -EBADMSG);
		}
		if (writer_fails) {
			assert_int_equal(shm_feed_writer_open(fd, &w), -EUCLEAN);
		} else {
			assert_int_equal(shm_feed_writer_open(fd, &w), 0);
			shm_feed_close(w);
		}
		shm_feed_close(r);
		close(fd);
	}
	shm_feed_event_release(&ev);
}

/* ---- the writer ------------------------------------------------------------------------------ */
static void test_writer_lock_and_restart(void **state)
{
	(void)state;
	setup_flags();
	int fd = new_feed(1 << 20, 0, 0);
	struct shm_feed *w, *w2, *r;
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	assert_int_equal(shm_feed_writer_open(fd, &w2), -EBUSY);
	assert_int_equal(shm_feed_reader_open(fd, &r), 0);
	for (int i = 0; i < 10; i++)
		pub_next(w, 1);
	shm_feed_close(w);
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	struct shm_feed_stats st;
	shm_feed_stats(w, &st);
	assert_true(st.incarnation == 2 && st.position == 11 && st.published == 10);
	for (int i = 0; i < 10; i++)
		pub_next(w, 2);
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	for (uint64_t s = 1; s <= 20; s++) {
		assert_int_equal(shm_feed_next(r, &ev), 1);
		assert_true(ev.seq == s && fo_check(&ev, &scratch));
		assert_true(fo_gen_of(&ev) == (s <= 10 ? 1 : 2));
	}
	/* a writer killed right after open: the lock goes with it */
	shm_feed_close(w);
	pid_t p = fork();
	if (p == 0) {
		struct shm_feed *cw;
		if (shm_feed_writer_open(fd, &cw) < 0)
			_exit(1);
		raise(SIGKILL);
	}
	int status;
	waitpid(p, &status, 0);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	shm_feed_event_release(&ev);
	shm_feed_close(r);
	shm_feed_close(w);
	close(fd);
}

/* Kill the writer at every publication step (1st..3rd visit), restart it on the same feed:
 * a reader that was there all along sees every seq once, in order, each entry intact, and
 * an entry published right before the kill is kept (never published again differently). */
static void test_crash_steps(void **state)
{
	(void)state;
	setup_flags();
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	int kills = 0;
	for (int step = 1; step <= SHM_FEED_STEP_MAX; step++) {
		for (long count = 1; count <= 3; count++) {
			fo_words = 500; /* large entries: pads come every few publications */
			int fd = new_feed(64 << 10, 0, 0);
			struct shm_feed *r, *w;
			assert_int_equal(shm_feed_reader_open(fd, &r), 0);
			/* lock-step with the child (one entry, then the reader drains), so the
			 * reader is never lapped and sees everything the dead writer published */
			int up[2], down[2];
			assert_int_equal(pipe(up), 0);
			assert_int_equal(pipe(down), 0);
			pid_t p = fork();
			if (p == 0) {
				struct shm_feed *cw;
				char c = 0;
				if (shm_feed_writer_open(fd, &cw) < 0)
					_exit(1);
				for (int i = 0; i < 80; i++) {
					if (i == 3) {
						shm_feed__test_crash_step = step;
						shm_feed__test_crash_count = count;
					}
					pub_next(cw, 1);
					if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) != 1)
						_exit(1);
				}
				_exit(2); /* the step was never reached */
			}
			close(up[1]);
			close(down[0]);
			uint64_t expect = 1;
			int x;
			char c;
			for (;;) {
				bool more = read(up[0], &c, 1) == 1;
				while ((x = shm_feed_next(r, &ev)) == 1) {
					assert_true(ev.seq == expect && fo_check(&ev, &scratch) &&
					            fo_gen_of(&ev) == 1);
					expect++;
				}
				assert_int_equal(x, 0);
				if (!more || write(down[1], &c, 1) != 1)
					break;
			}
			close(up[0]);
			close(down[1]);
			int status;
			waitpid(p, &status, 0);
			if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
				/* pad steps are only reached when a pad is needed */
				assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 2);
				assert_true(step == SHM_FEED_STEP_PAD_HDR ||
				            step == SHM_FEED_STEP_PAD_PUBLISHED);
			} else {
				kills++;
			}
			x = shm_feed_writer_open(fd, &w);
			if (x < 0)
				print_error("step %d count %ld: writer_open %d\n", step, count, x);
			assert_int_equal(x, 0);
			uint64_t resume = next_seq(w);
			/* the restarted writer continues exactly after what the reader got, and
			 * every hint names the last entry */
			assert_true(resume == expect);
			struct shm_feed_stats wst;
			shm_feed_stats(w, &wst);
			assert_true(wst.last_seq == resume - 1);
			assert_true(shm_feed_wait_token(r) == (uint32_t)(resume - 1));
			bool pad_step = step == SHM_FEED_STEP_PAD_HDR ||
			                step == SHM_FEED_STEP_PAD_PUBLISHED;
			if (!pad_step && step >= SHM_FEED_STEP_PUBLISHED)
				assert_true(resume ==
				            4 + (uint64_t)count); /* the killed one is kept */
			if (!pad_step && step < SHM_FEED_STEP_PUBLISHED)
				assert_true(resume == 3 + (uint64_t)count);
			for (int i = 0; i < 5; i++)
				pub_next(w, 2);
			while ((x = shm_feed_next(r, &ev)) == 1) {
				assert_true(ev.seq == expect && fo_check(&ev, &scratch) &&
				            fo_gen_of(&ev) == 2);
				expect++;
			}
			assert_int_equal(x, 0);
			assert_true(expect == resume + 5);
			/* a reader attached after the recovery starts at the end */
			struct shm_feed *r2;
			assert_int_equal(shm_feed_reader_open(fd, &r2), 0);
			assert_true(shm_feed_position(r2) == expect);
			shm_feed_close(r2);
			shm_feed_close(w);
			shm_feed_close(r);
			close(fd);
		}
	}
	print_message("crash steps: %d kills\n", kills);
	assert_int_equal(kills, SHM_FEED_STEP_MAX * 3); /* pads too: every step was reached */
	shm_feed_event_release(&ev);
	fo_words = 40;
}

/* ---- waiting --------------------------------------------------------------------------------- */
static void test_wait_and_wake(void **state)
{
	(void)state;
	setup_flags();
	int fd = new_feed(1 << 20, 0, 0), ro;
	assert_int_equal(shm_feed_reader_fd(fd, &ro), 0);
	struct shm_feed *w, *r;
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	assert_int_equal(shm_feed_reader_open(ro, &r), 0);
	assert_int_equal(shm_feed_wake(w), 0); /* nothing published: no syscall */
	uint32_t tok = shm_feed_wait_token(r);
	assert_int_equal(shm_feed_wait(r, tok, 20000), -ETIMEDOUT);
	pub_next(w, 1);
	assert_int_equal(shm_feed_wait(r, tok, 20000), -EAGAIN); /* published after the token */
	assert_true(shm_feed_take_wake(w));
	assert_false(shm_feed_take_wake(w));
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	assert_int_equal(shm_feed_next(r, &ev), 1);
	/* a waiter in another process is woken by publish + wake */
	tok = shm_feed_wait_token(r);
	assert_int_equal(shm_feed_next(r, &ev), 0);
	pid_t p = fork();
	if (p == 0) {
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
		pub_next(w, 1);
		_exit(shm_feed_wake(w) >= 0 ? 0 : 3);
	}
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int x = shm_feed_wait(r, tok, 5000000);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_true(x == 0 || x == -EAGAIN);
	int status;
	waitpid(p, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 4000000000L);
	assert_int_equal(shm_feed_next(r, &ev), 1);
	assert_true(ev.seq == 2);
	shm_feed_event_release(&ev);
	shm_feed_close(r);
	shm_feed_close(w);
	close(ro);
	close(fd);
}

/* ---- wake classes (F9) ------------------------------------------------------------------------
 */
static void pub_class(struct shm_feed *w, uint32_t bit)
{
	fo_build(next_seq(w), 1, &fb);
	fb.pub.wake = bit;
	assert_int_equal(shm_feed_publish(w, &fb.pub, NULL), 0);
}

/* 'S' in /proc/<pid>/stat: the child sleeps (its only sleep is the futex wait) */
static bool sleeping(pid_t p)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)p);
	FILE *fp = fopen(path, "r");
	if (!fp)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = 0;
	const char *e = strrchr(buf, ')');
	return e && e[1] == ' ' && e[2] == 'S';
}

/* A consumer with an interest is woken by a batch of its class, not by another class's; a
 * batch of another class still moves the token (no lost wake: the wait of a consumer that took
 * its token before it returns at once). */
static void test_wake_classes(void **state)
{
	(void)state;
	setup_flags();
	const uint32_t a = UINT32_C(1) << 3, b = UINT32_C(1) << 17;
	int fd = new_feed(1 << 20, 0, 0), ro;
	assert_int_equal(shm_feed_reader_fd(fd, &ro), 0);
	struct shm_feed *w, *r;
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	assert_int_equal(shm_feed_reader_open(ro, &r), 0);
	assert_true(shm_feed_interest(r) == SHM_FEED_WAKE_ALL);
	shm_feed_set_interest(r, a);
	assert_true(shm_feed_interest(r) == (a | SHM_FEED_WAKE_CONTROL));
	/* classes: one bit of 0..30, stable; "*" and NULL are every class */
	uint32_t pods = shm_feed_wake_bit("pods");
	assert_true(pods && !(pods & (pods - 1)) && !(pods & SHM_FEED_WAKE_CONTROL));
	assert_true(pods == shm_feed_wake_bit("pods"));
	assert_true(shm_feed_wake_bit("*") == SHM_FEED_WAKE_ALL);
	/* the batch's mask is the OR of its entries' classes; 0 = every class */
	pub_class(w, a);
	pub_class(w, b);
	assert_true(shm_feed_take_wake(w) == (a | b));
	assert_true(shm_feed_take_wake(w) == 0);
	pub_class(w, 0);
	assert_true(shm_feed_take_wake(w) == SHM_FEED_WAKE_ALL);
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	while (shm_feed_next(r, &ev) == 1)
		;
	/* another class's publication after the token: the wait returns at once */
	uint32_t tok = shm_feed_wait_token(r);
	pub_class(w, b);
	assert_int_equal(shm_feed_wait(r, tok, 20000), -EAGAIN);
	assert_int_equal(shm_feed_wake(w), 0);
	assert_int_equal(shm_feed_next(r, &ev), 1);
	/* a sleeper of class a: a wake of class b leaves it asleep, one of class a wakes it */
	tok = shm_feed_wait_token(r);
	pid_t p = fork();
	if (p == 0)
		_exit(shm_feed_wait(r, tok, 5000000) == 0 ? 0 : 3);
	for (int i = 0; i < 2000 && !sleeping(p); i++)
		usleep(1000);
	usleep(20000);
	pub_class(w, b);
	assert_int_equal(shm_feed_wake(w), 0);
	usleep(20000);
	int status;
	assert_int_equal(waitpid(p, &status, WNOHANG), 0); /* still asleep */
	/* its futex wait stands though the word moved (the kernel compared it once) */
	pub_class(w, a);
	assert_int_equal(shm_feed_wake(w), 1);
	waitpid(p, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	shm_feed_event_release(&ev);
	shm_feed_close(r);
	shm_feed_close(w);
	close(ro);
	close(fd);
}

/* The lag sweep (F9 b, c): every consumer is woken once per sweep distance at a batch's end,
 * and inside a batch that runs a quarter ring past the last sweep; the negative control
 * (SHM_FEED_TEST_WRONG_MASK) wakes the wrong classes and never sweeps. */
static void test_wake_sweep(void **state)
{
	(void)state;
	setup_flags();
	const uint32_t b = UINT32_C(1) << 17;
	const uint64_t ring = 1 << 20, dist = ring / 8, slack = 4096;
	int fd = new_feed(ring, 0, 0);
	struct shm_feed *w;
	struct shm_feed_stats st;
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	assert_int_equal(shm_feed_stats(w, &st), 0);
	uint64_t from = st.last_pos == SHM_FEED_ABI_NO_POS ? 0 : st.last_pos, swept = 0;
	int alls = 0;
	for (int i = 0; i < 2000 && alls < 3; i++) {
		pub_class(w, b);
		uint32_t m = shm_feed_take_wake(w);
		assert_int_equal(shm_feed_stats(w, &st), 0);
		if (m == SHM_FEED_WAKE_ALL) {
			alls++;
			/* positions of the entries' starts; the writer counts their ends (a
			 * pad at the ring's end too): an entry's length of slack either way */
			assert_true(st.last_pos - from + slack >= dist);
			from = st.last_pos;
		} else {
			assert_true(m == b);
			assert_true(st.last_pos - from < dist + slack);
		}
		swept = st.sweeps;
	}
	assert_int_equal(alls, 3);
	assert_true(swept == 3);
	/* mid-batch: no take_wake, a quarter ring published: one sweep from inside publish */
	assert_int_equal(shm_feed_stats(w, &st), 0);
	uint64_t start = st.last_pos;
	while (st.last_pos - start < ring / 4 + ring / 16) {
		pub_class(w, b);
		assert_int_equal(shm_feed_stats(w, &st), 0);
	}
	assert_true(st.sweeps == swept + 1);
	(void)shm_feed_take_wake(w);
	/* negative control: the complement of the classes, and no sweep at all */
	shm_feed__test_flags = SHM_FEED_TEST_WRONG_MASK;
	assert_int_equal(shm_feed_stats(w, &st), 0);
	swept = st.sweeps;
	for (int i = 0; i < 1000; i++) {
		pub_class(w, b);
		uint32_t m = shm_feed_take_wake(w);
		assert_true(m && !(m & b) && !(m & SHM_FEED_WAKE_CONTROL));
	}
	assert_int_equal(shm_feed_stats(w, &st), 0);
	assert_true(st.sweeps == swept);
	shm_feed__test_flags = 0;
	shm_feed_close(w);
	close(fd);
}

/* The io_uring path ipc/loop.c uses (op 51 FUTEX_WAIT, shared, u32) on the feed's word, armed
 * from a read-only mapping and completed by the writer's wake from another process. */
static void test_uring_futex_wait(void **state)
{
	(void)state;
	setup_flags();
	struct io_uring ring;
	if (io_uring_queue_init(4, &ring, 0) < 0)
		skip();
	struct io_uring_probe *probe = io_uring_get_probe_ring(&ring);
	if (!probe || !io_uring_opcode_supported(probe, 51 /* IORING_OP_FUTEX_WAIT */)) {
		if (probe)
			io_uring_free_probe(probe);
		io_uring_queue_exit(&ring);
		skip();
	}
	io_uring_free_probe(probe);
	int fd = new_feed(1 << 20, 0, 0), ro;
	assert_int_equal(shm_feed_reader_fd(fd, &ro), 0);
	struct shm_feed *w, *r;
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	assert_int_equal(shm_feed_reader_open(ro, &r), 0);
	for (int round = 0; round < 2; round++) {
		uint32_t tok = shm_feed_wait_token(r);
		if (round == 1)
			pub_next(w, 1); /* published before arming: completes at once, -EAGAIN */
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		if (!sqe) {
			fail();
			return;
		}
		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = 51;
		sqe->fd = 0x02; /* FUTEX2_SIZE_U32, shared */
		sqe->addr = (uint64_t)(uintptr_t)shm_feed_futex_word(r);
		sqe->off = tok;
		sqe->addr3 = 0xffffffffu;
		sqe->user_data = 7;
		assert_int_equal(io_uring_submit(&ring), 1);
		pid_t p = 0;
		if (round == 0) {
			p = fork();
			if (p == 0) {
				struct timespec ts = {0, 30 * 1000 * 1000};
				nanosleep(&ts, NULL);
				pub_next(w, 1);
				_exit(shm_feed_wake(w) >= 1 ? 0 : 3);
			}
		}
		struct io_uring_cqe *cqe;
		struct __kernel_timespec kt = {.tv_sec = 5};
		assert_int_equal(io_uring_wait_cqe_timeout(&ring, &cqe, &kt), 0);
		assert_true(cqe->user_data == 7);
		if (round == 0) {
			assert_int_equal(cqe->res, 0);
			int status;
			waitpid(p, &status, 0);
			assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
			/* the child's publication moved the writer's position; resync our copy */
			shm_feed_close(w);
			assert_int_equal(shm_feed_writer_open(fd, &w), 0);
		} else {
			assert_int_equal(cqe->res, -EAGAIN);
		}
		io_uring_cqe_seen(&ring, cqe);
	}
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	assert_int_equal(shm_feed_next(r, &ev), 1);
	assert_int_equal(shm_feed_next(r, &ev), 1);
	assert_true(ev.seq == 2);
	shm_feed_event_release(&ev);
	io_uring_queue_exit(&ring);
	shm_feed_close(r);
	shm_feed_close(w);
	close(ro);
	close(fd);
}

/* The epoll backend's path (ipc/loop.c's helper thread): futex_waitv(2) on the feed's word,
 * shared, u32, from a read-only mapping, woken by the writer in another process. */
static void test_futex_waitv(void **state)
{
	(void)state;
	setup_flags();
	int fd = new_feed(1 << 20, 0, 0), ro;
	assert_int_equal(shm_feed_reader_fd(fd, &ro), 0);
	struct shm_feed *w, *r;
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	assert_int_equal(shm_feed_reader_open(ro, &r), 0);
	struct {
		uint64_t val, uaddr;
		uint32_t flags, reserved;
	} wv = {.val = shm_feed_wait_token(r),
	        .uaddr = (uint64_t)(uintptr_t)shm_feed_futex_word(r),
	        .flags = 0x02 /* FUTEX2_SIZE_U32, shared */};
	pid_t p = fork();
	if (p == 0) {
		struct timespec ts = {0, 30 * 1000 * 1000};
		nanosleep(&ts, NULL);
		pub_next(w, 1);
		_exit(shm_feed_wake(w) >= 0 ? 0 : 3);
	}
	struct timespec dl;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += 5;
	long x = syscall(449 /* futex_waitv */, &wv, 1u, 0u, &dl, CLOCK_MONOTONIC);
	if (x < 0 && errno == ENOSYS) {
		waitpid(p, NULL, 0);
		skip();
	}
	/* 0: woken on index 0; -EAGAIN: the child published before we slept */
	assert_true(x == 0 || (x < 0 && errno == EAGAIN));
	int status;
	waitpid(p, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	assert_int_equal(shm_feed_next(r, &ev), 1);
	shm_feed_event_release(&ev);
	shm_feed_close(r);
	shm_feed_close(w);
	close(ro);
	close(fd);
}

struct drain_ctx {
	uint64_t n, last;
	int fail_at;
};
static int drain_fn(const struct shm_feed_event *ev, void *ud)
{
	struct drain_ctx *c = ud;
	if (!fo_check(ev, &scratch))
		return -EIO;
	c->n++;
	c->last = ev->seq;
	return c->fail_at && (int)c->n == c->fail_at ? -ECANCELED : 0;
}

static void test_drain(void **state)
{
	(void)state;
	setup_flags();
	int fd = new_feed(64 << 10, 0, 0);
	struct shm_feed *w, *r;
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	assert_int_equal(shm_feed_reader_open(fd, &r), 0);
	struct drain_ctx c = {0};
	assert_int_equal(shm_feed_drain(r, 0, drain_fn, &c), 0);
	for (int i = 0; i < 30; i++)
		pub_next(w, 1);
	assert_int_equal(shm_feed_drain(r, 10, drain_fn, &c), 10);
	assert_true(c.last == 10);
	c.fail_at = 15;
	assert_int_equal(shm_feed_drain(r, 0, drain_fn, &c), -ECANCELED);
	assert_true(c.last == 15 && shm_feed_position(r) == 16);
	c.fail_at = 0;
	assert_int_equal(shm_feed_drain(r, 0, drain_fn, &c), 15);
	/* a lap after some deliveries: those count, the next call reports the lap */
	for (int i = 0; i < 5; i++)
		pub_next(w, 1);
	struct shm_feed *lag;
	assert_int_equal(shm_feed_reader_open(fd, &lag), 0);
	for (int i = 0; i < 2000; i++)
		pub_next(w, 1);
	assert_int_equal(shm_feed_drain(lag, 0, drain_fn, &c), -ESTALE);
	assert_int_equal(shm_feed_drain(lag, 0, NULL, &c), -EINVAL);
	shm_feed_close(lag);
	shm_feed_close(r);
	shm_feed_close(w);
	close(fd);
}

/* ---- giving ring pages back (F7) ------------------------------------------------------------ */
static uint64_t resident(int fd) /* bytes of the memfd held in memory */
{
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	return (uint64_t)st.st_blocks * 512;
}

/* reads up to max entries (0 = until caught up), checking each; the number read, or -ESTALE */
static int read_n(struct shm_feed *r, int max)
{
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	int n = 0, x = 0;
	uint64_t expect = shm_feed_position(r);
	while ((max == 0 || n < max) && (x = shm_feed_next(r, &ev)) == 1) {
		assert_true(ev.seq == expect && fo_check(&ev, &scratch));
		expect++;
		n++;
	}
	shm_feed_event_release(&ev);
	return x < 0 ? x : n;
}

static void test_trim_follows_slowest(void **state)
{
	(void)state;
	setup_flags();
	const uint64_t ring = 1 << 20, meta = SHM_FEED_ABI_RING_OFF;
	int fd = new_feed(ring, 0, 0), ro;
	assert_int_equal(shm_feed_reader_fd(fd, &ro), 0);
	struct shm_feed *w, *fast, *slow, *unreg;
	struct shm_feed_stats st;
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	assert_int_equal(shm_feed_reader_open(fd, &fast), 0);
	assert_int_equal(shm_feed_reader_open(fd, &slow), 0);
	assert_int_equal(shm_feed_reader_open(ro, &unreg), 0);
	assert_int_equal(shm_feed_stats(fast, &st), 0);
	assert_true(st.registered);
	assert_int_equal(shm_feed_stats(unreg, &st), 0);
	assert_false(st.registered);           /* a read-only fd cannot claim a slot */
	assert_int_equal(shm_feed_trim(w), 0); /* nothing published */

	/* 1,200 entries (about 570 KiB): every page written stays resident until trimmed */
	for (int i = 0; i < 1200; i++)
		pub_next(w, 1);
	uint64_t full = resident(fd);
	assert_true(full >= meta + (500u << 10));
	assert_int_equal(read_n(fast, 0), 1200);
	/* slow has read nothing: its slot holds every page */
	assert_int_equal(shm_feed_trim(w), 0);
	assert_true(resident(fd) >= full);
	/* slow passes half: the pages below it go back, in whole pages */
	assert_int_equal(read_n(slow, 600), 600);
	int64_t got = shm_feed_trim(w);
	assert_true(got >= 200 << 10 && got % SHM_FEED_ABI_PAGE == 0);
	assert_true(resident(fd) <= full - (uint64_t)got + 2 * SHM_FEED_ABI_PAGE);
	/* the unregistered reader was not protected: it sees a lap, never zeros as "nothing yet"
	 * and never garbage */
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	assert_int_equal(shm_feed_next(unreg, &ev), -ESTALE);
	/* slow was protected: it reads the rest, exact */
	assert_int_equal(read_n(slow, 0), 600);
	assert_true(shm_feed_trim(w) > 0);
	/* everything read: at most the newest entry's page and less than a chunk stay */
	assert_true(resident(fd) <= meta + 2 * SHM_FEED_ABI_PAGE + ring / 16);
	assert_int_equal(shm_feed_stats(w, &st), 0);
	assert_true(st.trimmed >= 500u << 10);

	/* the writer laps the ring 3 times through punched pages, trimming per batch, while both
	 * registered readers keep up: no lap, every entry exact, resident stays small */
	uint64_t peak = 0;
	for (int b = 0; b < 60; b++) {
		for (int i = 0; i < 100; i++)
			pub_next(w, 2);
		assert_int_equal(read_n(fast, 0), 100);
		assert_int_equal(read_n(slow, 0), 100);
		assert_true(shm_feed_take_wake(w)); /* trims */
		if (resident(fd) > peak)
			peak = resident(fd);
	}
	assert_true(peak <= meta + (200u << 10));
	/* a reader killed without closing holds pages only until the writer sees its pid gone */
	pid_t p = fork();
	if (p == 0) {
		struct shm_feed *c;
		_exit(shm_feed_reader_open(fd, &c) == 0 ? 0 : 1); /* no close: the slot stays */
	}
	int ws;
	assert_int_equal(waitpid(p, &ws, 0), p);
	assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	for (int i = 0; i < 1200; i++)
		pub_next(w, 3);
	assert_int_equal(read_n(fast, 0), 1200);
	assert_int_equal(read_n(slow, 0), 1200);
	assert_true(shm_feed_trim(w) >= 500 << 10);

	shm_feed_close(unreg);
	shm_feed_close(slow);
	shm_feed_close(fast);
	shm_feed_close(w);
	close(ro);
	close(fd);
}

static void test_trim_punched_read_is_a_lap(void **state)
{
	(void)state;
	setup_flags();
	int fd = new_feed(1 << 20, 0, 0);
	struct shm_feed *w, *r;
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	assert_int_equal(shm_feed_reader_open(fd, &r), 0);
	for (int i = 0; i < 1200; i++)
		pub_next(w, 1);
	/* a trim that ignores r's slot (as one that raced r's seek would): r's next entry reads as
	 * zeros, and r reports a lap */
	shm_feed__test_flags = SHM_FEED_TEST_TRIM_ALL;
	assert_true(shm_feed_trim(w) > 0);
	assert_int_equal(shm_feed_pending(r), 1);
	assert_int_equal(shm_feed_next(r, &ev), -ESTALE);
	uint64_t at;
	assert_int_equal(shm_feed_seek_end(r, &at), 0);
	pub_next(w, 1);
	assert_int_equal(read_n(r, 0), 1);
	/* negative control: the same punch without moving tail first leaves a reader that sees
	 * zeros as "nothing published yet" and waits for ever: F7's tail store is what makes the
	 * punched page a detectable state */
	struct shm_feed *r2;
	assert_int_equal(shm_feed_reader_open(fd, &r2), 0);
	for (int i = 0; i < 1200; i++)
		pub_next(w, 1);
	shm_feed__test_flags = SHM_FEED_TEST_TRIM_ALL | SHM_FEED_TEST_TRIM_NO_TAIL;
	assert_true(shm_feed_trim(w) > 0);
	assert_int_equal(shm_feed_next(r2, &ev), 0);
	shm_feed__test_flags = 0;
	shm_feed_event_release(&ev);

	/* 128 slots: the 129th reader runs unregistered, a closed reader's slot is reused */
	struct shm_feed *many[SHM_FEED_ABI_SLOTS - 2], *extra;
	struct shm_feed_stats st;
	for (unsigned i = 0; i < SHM_FEED_ABI_SLOTS - 2; i++) {
		assert_int_equal(shm_feed_reader_open(fd, &many[i]), 0);
		assert_int_equal(shm_feed_stats(many[i], &st), 0);
		assert_true(st.registered);
	}
	assert_int_equal(shm_feed_reader_open(fd, &extra), 0);
	assert_int_equal(shm_feed_stats(extra, &st), 0);
	assert_false(st.registered);
	shm_feed_close(extra);
	shm_feed_close(many[5]);
	assert_int_equal(shm_feed_reader_open(fd, &many[5]), 0);
	assert_int_equal(shm_feed_stats(many[5], &st), 0);
	assert_true(st.registered);
	for (unsigned i = 0; i < SHM_FEED_ABI_SLOTS - 2; i++)
		shm_feed_close(many[i]);
	shm_feed_close(r2);
	shm_feed_close(r);
	shm_feed_close(w);
	close(fd);
}

/* The parent's side of a durable-consumer child: publish n entries for it, then reap it (it
 * ends by SIGKILL, leaving its named slot behind, F8). */
static void publish_then_reap_killed(struct shm_feed *w, pid_t p, int n)
{
	int status;
	usleep(50000);
	for (int i = 0; i < n; i++)
		pub_next(w, 1);
	assert_int_equal(waitpid(p, &status, 0), p);
	assert_true(WIFSIGNALED(status));
}

static bool want_1_4(uint16_t type, void *ud)
{
	(*(int *)ud)++;
	return type == 1 || type == 4;
}

/* The type filter (F9): entries of other types are stepped over, the wanted ones delivered in
 * order with their own seqs; a step over an overwritten entry is a lap; a durable consumer's
 * commit covers what was stepped over. fo_build's type is seq % 7. */
static void test_type_filter(void **state)
{
	(void)state;
	setup_flags();
	int fd = new_feed(64 << 10, 0, 0);
	struct shm_feed *w, *c;
	bool resumed;
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	/* a child positioned at 1 reads 1..30 through the filter, commits and dies (the durable
	 * name outlives it, F8) */
	pid_t p = fork();
	if (p == 0) {
		struct shm_feed_event cev = SHM_FEED_EVENT_INIT;
		int calls = 0, got = 0;
		if (shm_feed_consumer_open(fd, "dispatcher/f", &c, NULL) < 0)
			_exit(1);
		shm_feed_set_type_filter(c, want_1_4, &calls);
		while (shm_feed_lag(c) < 30)
			usleep(1000);
		uint64_t want = 1;
		int r;
		while ((r = shm_feed_next(c, &cev)) == 1) {
			while (want % 7 != 1 && want % 7 != 4)
				want++;
			/* in order, each of its types, decoded whole */
			if (cev.seq != want || cev.type != want % 7 || !fo_check(&cev, &scratch))
				_exit(2);
			want++;
			got++;
		}
		/* 1 4 8 11 15 18 22 25 29 of 1..30; every entry asked about once */
		if (r != 0 || got != 9 || calls != 30 || shm_feed_position(c) != 31 ||
		    shm_feed_pending(c) != 0)
			_exit(3);
		shm_feed_commit(c); /* covers the entries stepped over */
		raise(SIGKILL);
	}
	publish_then_reap_killed(w, p, 30);
	assert_int_equal(shm_feed_consumer_open(fd, "dispatcher/f", &c, &resumed), 0);
	assert_true(resumed);
	assert_int_equal(shm_feed_position(c), 31);
	int calls = 0;
	shm_feed_set_type_filter(c, want_1_4, &calls);
	/* a lap while stepping over: the writer laps the 64 KiB ring; -ESTALE, then seek_end */
	for (int i = 0; i < 400; i++)
		pub_next(w, 1);
	struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
	assert_int_equal(shm_feed_next(c, &ev), -ESTALE);
	uint64_t at;
	assert_int_equal(shm_feed_seek_end(c, &at), 0);
	assert_int_equal(shm_feed_next(c, &ev), 0);
	/* without a filter every entry again */
	shm_feed_set_type_filter(c, NULL, NULL);
	pub_next(w, 1);
	pub_next(w, 1);
	assert_int_equal(shm_feed_next(c, &ev), 1);
	assert_true(ev.seq == at);
	shm_feed_event_release(&ev);
	shm_feed_close(c);
	shm_feed_close(w);
	close(fd);
}

/* a durable consumer of `name` positioned at the end, then the writer publishes k entries */
static void durable_open_then_publish(int fd, struct shm_feed *w, const char *name, int k)
{
	struct shm_feed *c;
	bool resumed = true;
	assert_int_equal(shm_feed_consumer_open(fd, name, &c, &resumed), 0);
	/* leave it claimed by a process that dies: fork a holder that exits without closing */
	shm_feed_close(c); /* a clean close frees the name */
	(void)resumed;
	for (int i = 0; i < k; i++)
		pub_next(w, 1);
}

static void test_durable_resume(void **state)
{
	(void)state;
	setup_flags();
	int fd = new_feed(256 << 10, 0, 0);
	struct shm_feed *w, *c, *other;
	struct shm_feed_stats st;
	bool resumed;
	assert_int_equal(shm_feed_writer_open(fd, &w), 0);
	assert_int_equal(shm_feed_consumer_open(fd, "", &c, &resumed), -EINVAL);

	/* a fresh name starts at the end, not resumed */
	for (int i = 0; i < 3; i++)
		pub_next(w, 1);
	assert_int_equal(shm_feed_consumer_open(fd, "dispatcher/a", &c, &resumed), 0);
	assert_false(resumed);
	assert_int_equal(shm_feed_stats(c, &st), 0);
	assert_true(st.durable && st.resume == 0);
	assert_int_equal(shm_feed_position(c), 4);
	/* one live process per name: a second open of it runs anonymous */
	assert_int_equal(shm_feed_consumer_open(fd, "dispatcher/a", &other, &resumed), 0);
	assert_int_equal(shm_feed_stats(other, &st), 0);
	assert_false(st.durable);
	shm_feed_close(other);
	shm_feed_close(c);

	/* a child opens "dispatcher/b" at seq 4, handles 4..7 and dies: the next process of the
	 * name resumes at 8, even after the writer trimmed (the dead named slot holds its pages) */
	shm_feed__test_trim_chunk = 4096;
	pid_t p = fork();
	if (p == 0) {
		struct shm_feed *cc;
		struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
		if (shm_feed_consumer_open(fd, "dispatcher/b", &cc, NULL) < 0)
			_exit(1);
		while (shm_feed_position(cc) != 4)
			_exit(3);
		/* wait for the parent's 10 entries */
		while (shm_feed_lag(cc) < 10)
			usleep(1000);
		for (int i = 0; i < 4; i++) {
			if (shm_feed_next(cc, &ev) != 1 || ev.seq != 4u + (unsigned)i)
				_exit(2);
			shm_feed_commit(cc);
		}
		raise(SIGKILL);
	}
	publish_then_reap_killed(w, p, 10);
	for (int i = 0; i < 300; i++)
		pub_next(w, 1);
	(void)shm_feed_trim(w);
	assert_int_equal(shm_feed_consumer_open(fd, "dispatcher/b", &c, &resumed), 0);
	assert_true(resumed);
	assert_int_equal(shm_feed_stats(c, &st), 0);
	assert_int_equal(st.resume, 1);
	assert_int_equal(shm_feed_position(c), 8);
	assert_int_equal(read_n(c, 0), 10 - 4 + 300);
	shm_feed_commit(c);
	shm_feed_close(c); /* a clean close: the name is free, the next open starts at the end */
	assert_int_equal(shm_feed_consumer_open(fd, "dispatcher/b", &c, &resumed), 0);
	assert_false(resumed);
	shm_feed_close(c);

	/* negative control of the resume: with it off, the same death loses entries */
	durable_open_then_publish(fd, w, "dispatcher/c", 0);
	uint64_t first = next_seq(w);
	p = fork();
	if (p == 0) {
		struct shm_feed *cc;
		struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
		if (shm_feed_consumer_open(fd, "dispatcher/c", &cc, NULL) < 0)
			_exit(1);
		while (shm_feed_lag(cc) < 5)
			usleep(1000);
		for (int i = 0; i < 2; i++) {
			if (shm_feed_next(cc, &ev) != 1)
				_exit(2);
			shm_feed_commit(cc);
		}
		raise(SIGKILL);
	}
	publish_then_reap_killed(w, p, 5);
	shm_feed__test_flags = SHM_FEED_TEST_NO_RESUME;
	assert_int_equal(shm_feed_consumer_open(fd, "dispatcher/c", &c, &resumed), 0);
	shm_feed__test_flags = 0;
	assert_false(resumed);
	assert_int_equal(shm_feed_position(c), first + 5); /* 3 entries never delivered */
	shm_feed_close(c);

	/* a dead consumer the writer lapped: the resume is refused (said in stats) */
	p = fork();
	if (p == 0) {
		struct shm_feed *cc;
		struct shm_feed_event ev = SHM_FEED_EVENT_INIT;
		if (shm_feed_consumer_open(fd, "dispatcher/d", &cc, NULL) < 0)
			_exit(1);
		while (shm_feed_lag(cc) < 1)
			usleep(1000);
		if (shm_feed_next(cc, &ev) != 1)
			_exit(2);
		shm_feed_commit(cc);
		raise(SIGKILL);
	}
	publish_then_reap_killed(w, p, 2);
	for (int i = 0; i < 1500; i++) /* more than the 256 KiB ring */
		pub_next(w, 1);
	assert_int_equal(shm_feed_consumer_open(fd, "dispatcher/d", &c, &resumed), 0);
	assert_false(resumed);
	assert_int_equal(shm_feed_stats(c, &st), 0);
	assert_int_equal(st.resume, 2);
	assert_int_equal(shm_feed_position(c), next_seq(w));
	shm_feed_close(c);
	shm_feed__test_trim_chunk = 0;
	shm_feed_close(w);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_roundtrip_every_op),
	        cmocka_unit_test(test_publish_errors),
	        cmocka_unit_test(test_create_opts),
	        cmocka_unit_test(test_lap_exact),
	        cmocka_unit_test(test_lap_midway_and_pads),
	        cmocka_unit_test(test_wraparound),
	        cmocka_unit_test(test_bad_headers),
	        cmocka_unit_test(test_corrupt_entries),
	        cmocka_unit_test(test_writer_lock_and_restart),
	        cmocka_unit_test(test_crash_steps),
	        cmocka_unit_test(test_wait_and_wake),
	        cmocka_unit_test(test_wake_classes),
	        cmocka_unit_test(test_wake_sweep),
	        cmocka_unit_test(test_uring_futex_wait),
	        cmocka_unit_test(test_futex_waitv),
	        cmocka_unit_test(test_drain),
	        cmocka_unit_test(test_trim_follows_slowest),
	        cmocka_unit_test(test_trim_punched_read_is_a_lap),
	        cmocka_unit_test(test_durable_resume),
	        cmocka_unit_test(test_type_filter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
