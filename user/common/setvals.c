/* setvals.c - see setvals.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "setvals.h"

int xbd_setvals_index(const struct xbd_setvals *s, const char *key)
{
	for (int i = 0; i < XBD_SETVALS_KEYS; i++)
		if (s->key[i][0] && !strcmp(s->key[i], key))
			return i;
	return -ENOENT;
}

int xbd_setvals_put(struct xbd_setvals *s, const char *key, const char *text)
{
	int i = xbd_setvals_index(s, key);
	size_t len = strlen(text);

	if (!xb_config_key_known(key) || strlen(key) >= XBD_SETVALS_KEY)
		return -ENOENT;
	if (!len || len >= XBD_SETVALS_TEXT || strcspn(text, " \t\r\n") != len)
		return -EINVAL;
	for (int j = 0; i < 0 && j < XBD_SETVALS_KEYS; j++)
		if (!s->key[j][0])
			i = j;
	if (i < 0)
		return -ENOSPC;
	memcpy(s->key[i], key, strlen(key) + 1);
	memcpy(s->text[i], text, len + 1);
	return 0;
}

bool xbd_setvals_drop(struct xbd_setvals *s, const char *key)
{
	int i = xbd_setvals_index(s, key);

	if (i < 0)
		return false;
	s->key[i][0] = s->text[i][0] = '\0';
	return true;
}

size_t xbd_setvals_count(const struct xbd_setvals *s)
{
	size_t n = 0;

	for (int i = 0; i < XBD_SETVALS_KEYS; i++)
		n += s->key[i][0] != '\0';
	return n;
}

int xbd_setvals_apply(struct xbd_setvals *s, struct xdpban_config *cfg, char *err, size_t errlen)
{
	char why[XB_ERRLEN];
	int ret = 0;

	for (int i = 0; i < XBD_SETVALS_KEYS; i++) {
		if (!s->key[i][0] || !xb_config_set(cfg, s->key[i], s->text[i], why, sizeof(why)))
			continue;
		if (!ret)
			snprintf(err, errlen, "%s", why);
		s->key[i][0] = s->text[i][0] = '\0';
		ret = -EINVAL;
	}
	return ret;
}

void xbd_setvals_format(const struct xbd_setvals *s, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < XBD_SETVALS_KEYS && used < len; i++)
		if (s->key[i][0])
			used += snprintf(buf + used, len - used, "%s%s %s", used ? ", " : "",
					 s->key[i], s->text[i]);
}
