/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * JSON through json-c (Debian's libjson-c-dev): the reports, the control
 * socket's -j replies and kcsanctl's own JSON are built as json-c objects
 * and printed here, one way: one line, no spaces, '/' not escaped, which
 * is what kcsand printed before it used a library.
 */
#ifndef KCSAND_JSON_H
#define KCSAND_JSON_H

#include <stdio.h>
#include <json-c/json.h>

/* Print o on out, without a newline, and free it; 0 or -ENOMEM/-EIO. */
int json__print(FILE *out, struct json_object *o);
/* A string; NULL gives "" (json__string_or_null(): null). */
struct json_object *json__string(const char *s);
struct json_object *json__string_or_null(const char *s);
/* Add key: value to obj (json-c takes value over). */
static inline void json__add(struct json_object *obj, const char *key, struct json_object *value)
{
	json_object_object_add(obj, key, value);
}

#endif
