// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include "json.h"

int json__print(FILE *out, struct json_object *o)
{
	const char *s;
	int ret = 0;

	if (!o)
		return -ENOMEM;
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!s || fputs(s, out) == EOF)
		ret = s ? -EIO : -ENOMEM;
	json_object_put(o);
	return ret;
}

struct json_object *json__string(const char *s)
{
	return json_object_new_string(s ? s : "");
}

struct json_object *json__string_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}
