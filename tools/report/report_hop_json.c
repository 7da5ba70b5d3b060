/* One hop's JSON into a flat table of values, no tree (report_hop_json.h): containers and keys. */
#include "report_hop_json.h"
#include "report_json_parser.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/common/tool_hash.h"

#define MAX_DEPTH 2048 /* jansson's JSON_PARSER_MAX_DEPTH: every value counts a level */
#define SMALL_OBJECT 8 /* members compared pairwise for repeats; more go through a table */

int report_json_fail(struct report_json_parser *p, size_t at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->j->error, sizeof(p->j->error), fmt, ap);
	va_end(ap);
	p->j->error_at = at;
	return -1;
}

static void skip_ws(struct report_json_parser *p)
{
	while (p->at < p->end && (p->t[p->at] == ' ' || p->t[p->at] == '\n' ||
				  p->t[p->at] == '\r' || p->t[p->at] == '\t'))
		p->at++;
}

/* A new node at the end of the table, its index in *index. */
static struct report_json_node *add_node(struct report_json_parser *p, size_t *index)
{
	struct report_json *j = p->j;

	if (j->nnodes == j->nodes_cap) {
		size_t cap = j->nodes_cap ? 2 * j->nodes_cap : 64;
		struct report_json_node *more = realloc(j->nodes, cap * sizeof(*more));

		if (!more)
			return NULL;
		j->nodes = more;
		j->nodes_cap = cap;
	}
	*index = j->nnodes++;
	memset(&j->nodes[*index], 0, sizeof(j->nodes[0]));
	return &j->nodes[*index];
}

static int value(struct report_json_parser *p, size_t depth, size_t *index);

/* After a member or element: ',' and another, or the closing bracket (*more false). */
static int after_item(struct report_json_parser *p, char close, bool *more)
{
	skip_ws(p);
	if (p->at < p->end && p->t[p->at] == ',') {
		p->at++;
		*more = true;
		return 0;
	}
	if (p->at < p->end && p->t[p->at] == close) {
		p->at++;
		*more = false;
		return 0;
	}
	return report_json_fail(p, p->at, close == '}' ? "'}' expected" : "']' expected");
}

static int array(struct report_json_parser *p, size_t depth, size_t self)
{
	bool more = true;
	size_t count = 0, item;

	p->at++;
	skip_ws(p);
	if (p->at < p->end && p->t[p->at] == ']') {
		p->at++;
		more = false;
	}
	while (more) {
		if (value(p, depth + 1, &item) || after_item(p, ']', &more))
			return -1;
		count++;
	}
	p->j->nodes[self].count = count;
	return 0;
}

static int member(struct report_json_parser *p, size_t depth)
{
	size_t key_at, key_len, key_text, item;
	bool key_decoded;

	skip_ws(p);
	key_text = p->at;
	if (p->at >= p->end || p->t[p->at] != '"')
		return report_json_fail(p, p->at, "string or '}' expected");
	if (report_json_string(p, &key_at, &key_len, &key_decoded))
		return -1;
	skip_ws(p);
	if (p->at >= p->end || p->t[p->at] != ':')
		return report_json_fail(p, p->at, "':' expected");
	p->at++;
	if (value(p, depth + 1, &item))
		return -1;
	p->j->nodes[item].key_at = key_at;
	p->j->nodes[item].key_len = key_len;
	p->j->nodes[item].key_decoded = key_decoded;
	p->j->nodes[item].text_at = key_text; /* a repeated key is named where it is */
	return 0;
}

static int object(struct report_json_parser *p, size_t depth, size_t self)
{
	bool more = true;
	size_t count = 0;

	p->at++;
	skip_ws(p);
	if (p->at < p->end && p->t[p->at] == '}') {
		p->at++;
		more = false;
	}
	while (more) {
		if (member(p, depth) || after_item(p, '}', &more))
			return -1;
		count++;
	}
	p->j->nodes[self].count = count;
	return 0;
}

static int value(struct report_json_parser *p, size_t depth, size_t *index)
{
	struct report_json_node *n;
	char c;
	int err;

	skip_ws(p);
	if (depth > MAX_DEPTH)
		return report_json_fail(p, p->at, "maximum parsing depth reached");
	if (!(n = add_node(p, index)))
		return report_json_fail(p, p->at, "out of memory");
	n->text_at = p->at;
	if (p->at >= p->end)
		return report_json_fail(p, p->at, "premature end of input");
	c = p->t[p->at];
	if (c == '{') {
		n->type = REPORT_JSON_OBJECT;
		err = object(p, depth, *index);
	} else if (c == '[') {
		n->type = REPORT_JSON_ARRAY;
		err = array(p, depth, *index);
	} else if (c == '"') {
		n->type = REPORT_JSON_STRING;
		err = report_json_string(p, &n->u.s.at, &n->u.s.len, &n->str_decoded);
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		err = report_json_number(p, n);
	} else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
		err = report_json_literal(p, n);
	} else {
		err = report_json_fail(p, p->at, c == ']' || c == '}' || c == ',' || c == ':' ? "unexpected token"
										  : "invalid token");
	}
	/* the table may have moved while the subtree grew it */
	p->j->nodes[*index].next = p->j->nnodes;
	return err;
}

static const char *key_of(const struct report_json *j, const struct report_json_node *n)
{
	return n->key_decoded ? j->decoded + n->key_at : j->text + n->key_at;
}

static uint64_t hash_span(const char *s, size_t len)
{
	uint64_t h = TOOL_FNV_OFFSET;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * TOOL_FNV_PRIME;
	return tool_hash_mix(h);
}

static bool same_key(const struct report_json *j, const struct report_json_node *a,
		     const char *key, size_t len)
{
	return a->key_len == len && !memcmp(key_of(j, a), key, len);
}

/*
 * obj's members in j->slots by key: -1 with *twice the repeated member when a
 * key comes twice (or out of memory: *twice NULL).
 */
static int index_members(struct report_json *j, const struct report_json_node *obj,
			 const struct report_json_node **twice)
{
	size_t want = 16;

	*twice = NULL;
	while (want < 2 * obj->count)
		want *= 2;
	if (want > j->nslots) {
		uint32_t *more = realloc(j->slots, want * sizeof(*more));

		if (!more)
			return -1;
		j->slots = more;
		j->nslots = want;
	}
	memset(j->slots, 0, j->nslots * sizeof(*j->slots));
	for (const struct report_json_node *m = report_json_first(j, obj); m;
	     m = report_json_next(j, obj, m)) {
		const char *key = key_of(j, m);
		size_t s = hash_span(key, m->key_len) & (j->nslots - 1);

		for (; j->slots[s]; s = (s + 1) & (j->nslots - 1)) {
			if (same_key(j, &j->nodes[j->slots[s] - 1], key, m->key_len)) {
				*twice = m;
				return -1;
			}
		}
		j->slots[s] = (uint32_t)(m - j->nodes) + 1;
	}
	return 0;
}

/* A member whose key an earlier one of the same small object has, else NULL. */
static const struct report_json_node *repeated_small(const struct report_json *j,
						     const struct report_json_node *obj)
{
	for (const struct report_json_node *m = report_json_first(j, obj); m;
	     m = report_json_next(j, obj, m)) {
		for (const struct report_json_node *e = report_json_first(j, obj); e != m;
		     e = report_json_next(j, obj, e)) {
			if (same_key(j, e, key_of(j, m), m->key_len))
				return m;
		}
	}
	return NULL;
}

/*
 * No key twice in an object (JSON_REJECT_DUPLICATES; a NUL in a key cannot
 * be: \u0000 is refused as it is read). The root object's members are then in
 * j->slots for report_json_get.
 */
static int check_keys(struct report_json_parser *p)
{
	struct report_json *j = p->j;

	for (size_t k = j->nnodes; k-- > 0;) { /* the root last: its index stays */
		const struct report_json_node *obj = &j->nodes[k], *twice = NULL;

		if (obj->type != REPORT_JSON_OBJECT)
			continue;
		if (k && obj->count <= SMALL_OBJECT)
			twice = repeated_small(j, obj);
		else if (index_members(j, obj, &twice) && !twice)
			return report_json_fail(p, obj->text_at, "out of memory");
		if (twice)
			return report_json_fail(p, twice->text_at, "duplicate object key");
	}
	return 0;
}

int report_json_parse(struct report_json *j, const char *text, size_t at, size_t end,
		      size_t *next)
{
	struct report_json_parser p = { j, text, at, end };
	size_t root;

	j->text = text;
	j->nnodes = 0;
	j->decoded_len = 0;
	j->error[0] = '\0';
	j->error_at = at;
	if (value(&p, 1, &root) || check_keys(&p))
		return -1;
	*next = p.at;
	return 0;
}

void report_json_free(struct report_json *j)
{
	free(j->nodes);
	free(j->decoded);
	free(j->slots);
	memset(j, 0, sizeof(*j));
}

const struct report_json_node *report_json_first(const struct report_json *j,
						 const struct report_json_node *c)
{
	(void)j;
	return c->count ? c + 1 : NULL;
}

const struct report_json_node *report_json_next(const struct report_json *j,
						const struct report_json_node *c,
						const struct report_json_node *n)
{
	return n->next < c->next ? &j->nodes[n->next] : NULL;
}

const struct report_json_node *report_json_get(const struct report_json *j,
					       const struct report_json_node *obj, const char *key)
{
	size_t len = strlen(key);

	if (obj->type != REPORT_JSON_OBJECT)
		return NULL;
	if (obj == j->nodes) { /* the root: through its index */
		for (size_t s = hash_span(key, len) & (j->nslots - 1); j->slots[s];
		     s = (s + 1) & (j->nslots - 1)) {
			if (same_key(j, &j->nodes[j->slots[s] - 1], key, len))
				return &j->nodes[j->slots[s] - 1];
		}
		return NULL;
	}
	for (const struct report_json_node *m = report_json_first(j, obj); m;
	     m = report_json_next(j, obj, m)) {
		if (same_key(j, m, key, len))
			return m;
	}
	return NULL;
}

const char *report_json_str(const struct report_json *j, const struct report_json_node *n)
{
	return n->str_decoded ? j->decoded + n->u.s.at : j->text + n->u.s.at;
}
