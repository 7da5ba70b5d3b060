#include "ib_mr.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fl_types.h"

#define IB_MR_CACHE_FIRST 32

void ib_mr_cache_init(struct ib_mr_cache *c, const struct ib_mr_ops *ops, void *ctx)
{
	long page = sysconf(_SC_PAGESIZE);

	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->ops = ops;
	c->ctx = ctx;
	c->page = page > 0 ? (size_t)page : 4096;
}

int ib_mr_cache_destroy(struct ib_mr_cache *c)
{
	int left = c->n;

	for (int i = 0; i < c->n; i++) {
		c->ops->dereg(c->ctx, c->items[i]);
		free(c->items[i]);
	}
	free(c->items);
	c->items = NULL;
	c->n = c->cap = 0;
	pthread_mutex_destroy(&c->lock);
	return left;
}

/* First index whose addr is >= addr. */
static int lower_bound(const struct ib_mr_cache *c, uintptr_t addr)
{
	int lo = 0, hi = c->n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (c->items[mid]->addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct ib_mr *find_covering(const struct ib_mr_cache *c, uintptr_t start, size_t len)
{
	/* Entries starting at or before start; the nearest ones are the likely hits. */
	for (int i = lower_bound(c, start + 1) - 1; i >= 0; i--) {
		struct ib_mr *m = c->items[i];

		if (m->addr + m->len >= start + len)
			return m;
	}
	return NULL;
}

static int insert(struct ib_mr_cache *c, struct ib_mr *m)
{
	int at;

	if (c->n == c->cap) {
		int cap = c->cap ? c->cap * 2 : IB_MR_CACHE_FIRST;
		struct ib_mr **items = realloc(c->items, (size_t)cap * sizeof(*items));

		if (!items)
			return fl_fail(FL_ERR_SYSTEM, "out of memory for the registration cache");
		c->items = items;
		c->cap = cap;
	}
	at = lower_bound(c, m->addr);
	memmove(c->items + at + 1, c->items + at, (size_t)(c->n - at) * sizeof(*c->items));
	c->items[at] = m;
	c->n++;
	return FL_OK;
}

static int register_new(struct ib_mr_cache *c, uintptr_t start, size_t len, struct ib_mr **out)
{
	struct ib_mr *m = calloc(1, sizeof(*m));
	int rc;

	if (!m)
		return fl_fail(FL_ERR_SYSTEM, "out of memory for a registration");
	m->addr = start;
	m->len = len;
	m->refs = 1;
	m->cached = 1;
	rc = c->ops->reg(c->ctx, start, len, m);
	if (!rc) {
		rc = insert(c, m);
		if (rc)
			c->ops->dereg(c->ctx, m);
	}
	if (rc) {
		free(m);
		return rc;
	}
	*out = m;
	return FL_OK;
}

int ib_mr_get(struct ib_mr_cache *c, void *data, size_t size, struct ib_mr **out)
{
	uintptr_t start = (uintptr_t)data & ~(uintptr_t)(c->page - 1);
	uintptr_t end = ((uintptr_t)data + (size ? size : 1) + c->page - 1) & ~(c->page - 1);
	struct ib_mr *m;
	int rc = FL_OK;

	*out = NULL;
	if ((uintptr_t)data + size < (uintptr_t)data)
		return fl_fail(FL_ERR_ARGUMENT, "registration of %zu bytes at %p wraps", size,
			       data);
	pthread_mutex_lock(&c->lock);
	m = find_covering(c, start, end - start);
	if (m)
		m->refs++;
	else
		rc = register_new(c, start, end - start, &m);
	pthread_mutex_unlock(&c->lock);
	if (!rc)
		*out = m;
	return rc;
}

int ib_mr_put(struct ib_mr_cache *c, struct ib_mr *m)
{
	int rc = FL_OK, at;

	if (!m)
		return FL_OK;
	pthread_mutex_lock(&c->lock);
	if (--m->refs > 0) {
		pthread_mutex_unlock(&c->lock);
		return FL_OK;
	}
	for (at = lower_bound(c, m->addr); at < c->n && c->items[at] != m; at++)
		;
	if (at < c->n) {
		memmove(c->items + at, c->items + at + 1,
			(size_t)(c->n - at - 1) * sizeof(*c->items));
		c->n--;
	}
	pthread_mutex_unlock(&c->lock);
	rc = c->ops->dereg(c->ctx, m);
	free(m);
	return rc;
}
