/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot, utilities layer: an intrusive list in most-recently-used
 * order, for the caches that evict their least recently used entry (ELF
 * files, processes, unwind tables). For lib/, not for programs.
 *
 * An entry embeds a struct tp_lru_node; tp_lru_entry() gets the entry back
 * from it. Zeroed is empty, for the list and for a node that is in none.
 */
#ifndef TAPROOT_UTIL_LRU_H
#define TAPROOT_UTIL_LRU_H

#include <stddef.h>

struct tp_lru_node {
	struct tp_lru_node *prev, *next;	/* toward the head, the tail */
};

struct tp_lru {
	struct tp_lru_node *head, *tail;	/* most, least recently used */
};

/* The entry of type @type whose member @member is the node @node (not NULL). */
#define tp_lru_entry(node, type, member) \
	((type *)((char *)(node) - offsetof(type, member)))

/* Put @n, in no list, at the head of @l. */
static inline void tp_lru_push(struct tp_lru *l, struct tp_lru_node *n)
{
	n->prev = NULL;
	n->next = l->head;
	if (l->head)
		l->head->prev = n;
	l->head = n;
	if (!l->tail)
		l->tail = n;
}

/* Put @n, in no list, at the tail of @l: the first to be evicted. */
static inline void tp_lru_push_tail(struct tp_lru *l, struct tp_lru_node *n)
{
	n->next = NULL;
	n->prev = l->tail;
	if (l->tail)
		l->tail->next = n;
	l->tail = n;
	if (!l->head)
		l->head = n;
}

/* Take @n out of @l; it is in no list after. */
static inline void tp_lru_unlink(struct tp_lru *l, struct tp_lru_node *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else
		l->head = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		l->tail = n->prev;
	n->prev = n->next = NULL;
}

/* @n, in @l, was just used: move it to the head. */
static inline void tp_lru_touch(struct tp_lru *l, struct tp_lru_node *n)
{
	if (l->head == n)
		return;
	tp_lru_unlink(l, n);
	tp_lru_push(l, n);
}

#endif /* TAPROOT_UTIL_LRU_H */
