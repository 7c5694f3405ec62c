/* setvals.c - see setvals.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "setvals.h"

int xbd_setvals_index(const char *key)
{
	const char *name;

	for (int i = 0; i < XBD_SETVALS_KEYS && (name = xb_config_key((size_t)i)); i++)
		if (!strcmp(name, key))
			return i;
	return -ENOENT;
}

int xbd_setvals_put(struct xbd_setvals *s, const char *key, const char *text)
{
	int i = xbd_setvals_index(key);
	size_t len = strlen(text);

	if (i < 0)
		return i;
	if (!len || len >= XBD_SETVALS_TEXT || strcspn(text, " \t\r\n") != len)
		return -EINVAL;
	memcpy(s->text[i], text, len + 1);
	return 0;
}

bool xbd_setvals_drop(struct xbd_setvals *s, const char *key)
{
	int i = xbd_setvals_index(key);
	bool had = i >= 0 && s->text[i][0];

	if (had)
		s->text[i][0] = '\0';
	return had;
}

size_t xbd_setvals_count(const struct xbd_setvals *s)
{
	size_t n = 0;

	for (int i = 0; i < XBD_SETVALS_KEYS; i++)
		n += s->text[i][0] != '\0';
	return n;
}

int xbd_setvals_apply(struct xbd_setvals *s, struct xdpban_config *cfg, char *err, size_t errlen)
{
	char why[XB_ERRLEN];
	int ret = 0;

	for (int i = 0; i < XBD_SETVALS_KEYS; i++) {
		if (!s->text[i][0] || !xb_config_set(cfg, xb_config_key((size_t)i), s->text[i], why,
						      sizeof(why)))
			continue;
		if (!ret)
			snprintf(err, errlen, "%s", why);
		s->text[i][0] = '\0';
		ret = -EINVAL;
	}
	return ret;
}

void xbd_setvals_format(const struct xbd_setvals *s, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < XBD_SETVALS_KEYS && used < len; i++)
		if (s->text[i][0])
			used += snprintf(buf + used, len - used, "%s%s %s", used ? ", " : "",
					 xb_config_key((size_t)i), s->text[i]);
}
