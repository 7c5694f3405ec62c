/* conf_parse.c - see conf_parse.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conf_parse.h"

int xbd_conf_resolve_path(const struct conf_parse *p, const char *value, char **out, char *why)
{
	char buf[PATH_MAX];
	int n;

	if (!value[0]) {
		snprintf(why, WHY_LEN, "empty path");
		return -EINVAL;
	}
	n = value[0] == '/' ? snprintf(buf, sizeof(buf), "%s", value)
			    : snprintf(buf, sizeof(buf), "%s/%s", p->dir, value);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		snprintf(why, WHY_LEN, "path too long");
		return -ENAMETOOLONG;
	}
	free(*out);
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}
