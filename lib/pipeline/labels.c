// SPDX-License-Identifier: GPL-2.0
/*
 * A sample's labels (internal.h): its own (pid, comm, thread_comm, tid,
 * cpu), its process's, the static ones, then the relabel rules'.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/internal.h"
#include "util/util.h"

int tp_pl_set_labeling(struct taproot_pipeline *p)
{
	const char *host[2] = { p->opts.hostname, p->opts.kernel_release };
	const char *const names[2] = { "hostname", "kernel_release" };
	size_t n = 0;

	if (p->opts.nr_static_labels > PL_STATIC_MAX)
		return tp_err(-EINVAL, "pipeline: %zu static labels, at most %d",
			      p->opts.nr_static_labels, PL_STATIC_MAX);
	for (int i = 0; i < 2; i++)
		if (host[i] && host[i][0])
			p->statics[n++] = TAPROOT_LABEL_STR(names[i], host[i]);
	for (size_t i = 0; i < p->opts.nr_static_labels; i++)
		p->statics[n++] = p->opts.static_labels[i];
	p->labeling.statics = p->statics;
	p->labeling.nr_statics = n;
	p->labeling.rules = p->opts.relabel;
	return 0;
}

const char *tp_pl_process_comm(struct taproot_pipeline *p, int pid, uint64_t start_time,
			       int tid, const char *thread_comm)
{
	size_t i = ((uint32_t)pid * 2654435761U) % PL_COMM_CACHE, n;
	struct pl_comm *c = NULL;
	char path[64];
	const char *root = p->opts.procs && p->opts.procs->proc_root ?
			   p->opts.procs->proc_root : "/proc";
	ssize_t len;
	int fd;

	for (n = 0; n < PL_COMM_CACHE; n++, i = (i + 1) % PL_COMM_CACHE) {
		if (!p->comms[i].pid || p->comms[i].pid == pid) {
			c = &p->comms[i];
			break;
		}
	}
	if (c && c->pid == pid && c->start_time == start_time && pid != tid)
		return c->comm;
	if (!c || (!c->pid && p->ncomms >= PL_COMM_CACHE * 3 / 4)) {
		memset(p->comms, 0, PL_COMM_CACHE * sizeof(p->comms[0]));
		p->ncomms = 0;
		i = ((uint32_t)pid * 2654435761U) % PL_COMM_CACHE;
		c = &p->comms[i];
	}
	if (!c->pid)
		p->ncomms++;
	c->pid = pid;
	c->start_time = start_time;
	if (pid == tid) {
		snprintf(c->comm, sizeof(c->comm), "%s", thread_comm);
		return c->comm;
	}
	snprintf(path, sizeof(path), "%s/%d/comm", root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	len = fd >= 0 ? read(fd, c->comm, sizeof(c->comm) - 1) : -errno;
	if (len < 0 && fd >= 0)
		len = -errno;
	if (fd >= 0)
		close(fd);
	if (p->opts.procs && p->opts.procs->observer && p->opts.procs->observer->read)
		p->opts.procs->observer->read(p->opts.procs->observer->arg, pid, TAPROOT_PROC_COMM,
					      len < 0 ? (int)len : 0, c->comm,
					      len < 0 ? 0 : (size_t)len);
	if (len <= 0) {
		snprintf(c->comm, sizeof(c->comm), "%s", thread_comm);
	} else {
		c->comm[len] = '\0';
		c->comm[strcspn(c->comm, "\n")] = '\0';
	}
	return c->comm;
}

void tp_pl_comm_forget(struct taproot_pipeline *p, int pid)
{
	size_t i = ((uint32_t)pid * 2654435761U) % PL_COMM_CACHE;

	for (size_t n = 0; n < PL_COMM_CACHE && p->comms[i].pid; n++, i = (i + 1) % PL_COMM_CACHE)
		if (p->comms[i].pid == pid) {
			p->comms[i].start_time = UINT64_MAX;	/* matches no process */
			return;
		}
}

bool tp_pl_sample_labels(struct taproot_pipeline *p, const struct pl_who *w,
			 unsigned int cpu, struct taproot_proc *proc,
			 struct taproot_profile_label *l, size_t *n, const char **commp)
{
	const char *comm = proc ? tp_pl_process_comm(p, (int)w->pid, taproot_proc_start_time(proc),
						  (int)w->tid, w->thread_comm) : w->thread_comm;

	*commp = comm;

	*n = 0;
	l[(*n)++] = TAPROOT_LABEL_NUM("pid", w->pid);
	l[(*n)++] = TAPROOT_LABEL_STR("comm", comm);
	l[(*n)++] = TAPROOT_LABEL_STR("thread_comm", w->thread_comm);
	if (p->opts.label_tid)
		l[(*n)++] = TAPROOT_LABEL_NUM("tid", w->tid);
	if (p->opts.label_cpu)
		l[(*n)++] = TAPROOT_LABEL_NUM("cpu", cpu);
	return taproot_labeling_finish(&p->labeling, proc ? taproot_proc_labels(proc) : NULL,
				       l, n, PL_LABELS_MAX, &p->st.relabel_dropped,
				       &p->st.relabel_skipped);
}

bool tp_pl_interval_dropped(struct taproot_pipeline *p, uint32_t pid, uint32_t tid,
			    const char *comm, const char *thread_comm,
			    struct taproot_proc *proc)
{
	struct taproot_profile_label l[PL_LABELS_MAX];
	uint64_t dropped = 0, skipped = 0;	/* counted as the interval is written */
	size_t n = 0;

	if (!p->relabel_early)
		return false;
	l[n++] = TAPROOT_LABEL_NUM("pid", pid);
	l[n++] = TAPROOT_LABEL_STR("comm", comm);
	l[n++] = TAPROOT_LABEL_STR("thread_comm", thread_comm);
	if (p->opts.label_tid)
		l[n++] = TAPROOT_LABEL_NUM("tid", tid);
	return !taproot_labeling_finish(&p->labeling, proc ? taproot_proc_labels(proc) : NULL,
					l, &n, PL_LABELS_MAX, &dropped, &skipped);
}
