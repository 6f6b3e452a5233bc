/*
 * A QEMU TCG plugin for `cargo xtask bench --profile`: counts how often
 * every guest instruction executes, by virtual address, and writes
 * `<address> <count>` lines (hexadecimal address, decimal count) to the
 * file named by its `out=` argument when QEMU exits.  Each translated
 * instruction gets an inline counter, so the counts are exact: an
 * instruction counts once per execution, and a `rep`-prefixed one once per
 * iteration, as under `-icount`.
 *
 * With `marks=FILE` it also counts every instruction in one total and,
 * each time the guest executes the marker `xchg %bx,%bx` (66 87 db, a
 * no-op), notes the total then; the totals go to FILE, one a line (the
 * storage rows: instructions executed between two markers, halted time
 * not charged; `xtask/src/bench/marks.rs`).
 *
 * QEMU's plugin interface (version 1, QEMU 7.2) is declared here rather
 * than included: Debian's QEMU ships the interface in its binary but not
 * its header.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
typedef struct {
	const char *target_name;
	struct {
		int min, cur;
	} version;
	_Bool system_emulation;
	struct {
		int smp_vcpus, max_vcpus;
	} system;
} qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    void (*cb)(unsigned int, void *),
					    enum qemu_plugin_cb_flags flags,
					    void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(
	qemu_plugin_id_t id,
	void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    void (*cb)(qemu_plugin_id_t, void *),
				    void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
						enum qemu_plugin_op op,
						void *ptr, uint64_t imm);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* One counter per translated instruction; a retranslation of the same
 * address gets a new one, and the lines are summed by address later. */
struct counter {
	uint64_t vaddr, count;
};
struct chunk {
	struct chunk *next;
	size_t used;
	struct counter c[4096];
};
static struct chunk *chunks;
static const char *out_path, *marks_path;
/* Every instruction executed (with `marks=`), and its value at each marker. */
static uint64_t total;
static uint64_t *marks;
static size_t nmarks, capmarks;

static const unsigned char MARKER[] = { 0x66, 0x87, 0xdb };

static void on_marker(unsigned int vcpu, void *userdata)
{
	(void)vcpu;
	(void)userdata;
	if (nmarks == capmarks) {
		capmarks = capmarks ? 2 * capmarks : 64;
		marks = realloc(marks, capmarks * sizeof *marks);
		if (!marks)
			abort();
	}
	marks[nmarks++] = total;
}

static struct counter *new_counter(uint64_t vaddr)
{
	if (!chunks || chunks->used == 4096) {
		struct chunk *c = calloc(1, sizeof *c);
		if (!c)
			abort();
		c->next = chunks;
		chunks = c;
	}
	struct counter *k = &chunks->c[chunks->used++];
	k->vaddr = vaddr;
	return k;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	for (size_t i = 0; i < qemu_plugin_tb_n_insns(tb); i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		struct counter *k = new_counter(qemu_plugin_insn_vaddr(insn));
		qemu_plugin_register_vcpu_insn_exec_inline(
			insn, QEMU_PLUGIN_INLINE_ADD_U64, &k->count, 1);
		if (!marks_path)
			continue;
		qemu_plugin_register_vcpu_insn_exec_inline(
			insn, QEMU_PLUGIN_INLINE_ADD_U64, &total, 1);
		if (qemu_plugin_insn_size(insn) == sizeof MARKER &&
		    !memcmp(qemu_plugin_insn_data(insn), MARKER, sizeof MARKER))
			qemu_plugin_register_vcpu_insn_exec_cb(
				insn, on_marker, QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
}

static void write_counts(qemu_plugin_id_t id, void *userdata)
{
	(void)id;
	(void)userdata;
	FILE *f = fopen(out_path, "w");
	if (!f) {
		perror(out_path);
		return;
	}
	for (struct chunk *c = chunks; c; c = c->next)
		for (size_t i = 0; i < c->used; i++)
			if (c->c[i].count)
				fprintf(f, "%" PRIx64 " %" PRIu64 "\n",
					c->c[i].vaddr, c->c[i].count);
	fclose(f);
	if (!marks_path)
		return;
	f = fopen(marks_path, "w");
	if (!f) {
		perror(marks_path);
		return;
	}
	for (size_t i = 0; i < nmarks; i++)
		fprintf(f, "%" PRIu64 "\n", marks[i]);
	fclose(f);
}

__attribute__((visibility("default"))) int
qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
		    char **argv)
{
	(void)info;
	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_path = argv[i] + 4;
		else if (!strncmp(argv[i], "marks=", 6))
			marks_path = argv[i] + 6;
	if (!out_path) {
		fprintf(stderr, "insn_count: needs out=FILE\n");
		return 1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, write_counts, NULL);
	return 0;
}
