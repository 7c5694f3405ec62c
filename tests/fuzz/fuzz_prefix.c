/* fuzz_prefix.c - libFuzzer harness for xb_prefix_parse (user/lib/prefix.c), the parser of
 * every address and prefix an operator or a client writes: list files, the control socket,
 * the CLI, the state file. No seam is needed: it is a pure function of its text.
 *
 * Each input is the text (cut at its first NUL, as every caller passes a C string). Checked:
 * a refusal is -EINVAL with a one-line message of printable ASCII (the input quoted with
 * xb_quote) and leaves *out alone; an accepted prefix has a
 * known family, a length in range and no host bits, formats into a text that parses back to
 * the same prefix, contains itself, and formats safely into every buffer size (-ENOSPC when
 * too small); a tiny error buffer is never overrun.
 *
 * Inputs are kept to 128 bytes (fuzz-options below): past 50 bytes, a text is refused at
 * once.
 */
/* fuzz-options: -max_len=128 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libxdpban.h"
#include "support.h"

static void check_format(const struct xb_prefix *p, const char *input)
{
	char text[64], small[64];
	struct xb_prefix again;
	char err[XB_ERRLEN];
	size_t len;

	fz_check(!xb_prefix_format(p, text, sizeof(text)), "'%s' parsed but does not format", input);
	len = strlen(text);
	for (size_t size = 0; size <= len + 1; size++) {
		int ret = xb_prefix_format(p, small, size);

		fz_check(size > len ? ret == 0 : ret == -ENOSPC, "format of '%s' into %zu bytes: %d",
			 text, size, ret);
		fz_check(ret || !strcmp(small, text), "format into %zu bytes: '%s', not '%s'", size,
			 small, text);
	}
	fz_check(!xb_prefix_parse(text, &again, err, sizeof(err)),
		 "'%s' formats as '%s', which does not parse: %s", input, text, err);
	fz_check(!memcmp(&again, p, sizeof(*p)), "'%s' -> '%s' parses to another prefix", input,
		 text);
}

static void check_accepted(const struct xb_prefix *p, const char *input)
{
	unsigned int bits = xb_family_bits(p->family);
	struct xdpban_key key;
	struct xb_prefix back;

	fz_check(p->family == XDPBAN_FAMILY_INET || p->family == XDPBAN_FAMILY_INET6,
		 "'%s': family %u", input, p->family);
	fz_check(p->plen <= bits, "'%s': length %u of %u bits", input, p->plen, bits);
	for (unsigned int bit = p->plen; bit < bits; bit++)
		fz_check(!(p->addr[bit / 8] & (0x80 >> (bit % 8))), "'%s': host bit %u set", input,
			 bit);
	if (p->family == XDPBAN_FAMILY_INET)
		for (int i = 4; i < 16; i++)
			fz_check(!p->addr[i], "'%s': IPv4 address with byte %d set", input, i);
	fz_check(xb_prefix_contains(p, p), "'%s' does not contain itself", input);
	check_format(p, input);
	if (!xb_prefix_is_addr(p))
		return;
	/* An address becomes a data-path key and back, at the default IPv6 granularity. */
	xb_key_from_addr(NULL, p, XDPBAN_DEFAULT_V6_PREFIX, &key);
	xb_key_to_prefix(&key, &back);
	fz_check(xb_prefix_contains(&back, p), "'%s': its key does not contain it", input);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fz_text(data, size), err[XB_ERRLEN], tiny[8];
	struct xb_prefix p, untouched;
	int ret;

	memset(&p, 0xa5, sizeof(p));
	untouched = p;
	ret = xb_prefix_parse(text, &p, err, sizeof(err));
	if (ret) {
		fz_check(ret == -EINVAL, "'%s': returned %d", text, ret);
		fz_check_message(err, sizeof(err), "xb_prefix_parse");
		fz_check(fz_printable(err), "the message quotes a byte as it is: %s", err);
		fz_check(!memcmp(&p, &untouched, sizeof(p)), "'%s' refused but *out changed", text);
	} else {
		check_accepted(&p, text);
	}
	fz_check(xb_prefix_parse(text, &p, tiny, sizeof(tiny)) == ret,
		 "'%s': another result with a small error buffer", text);
	free(text);
	return 0;
}
