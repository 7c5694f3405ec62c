/* control_fields.c - the table of the control protocol's names (control_fields.h), for the server,
 * the client and the check of docs/control.md. Data only: it never builds or reads JSON.
 */
#include <string.h>
#include "control_fields.h"

#define XB_CONTROL_CMD_ROW_(id, name, meaning) \
	[XB_CMD_##id] = { name, sizeof(name) - 1, "cmd", "string", meaning },
const struct xb_control_name xb_control_commands[XB_CMD__COUNT] = {
	XB_CONTROL_COMMANDS(XB_CONTROL_CMD_ROW_)
};

#define XB_CONTROL_FIELD_ROW_(id, name, in, type, meaning) \
	[XB_FIELD_##id] = { name, sizeof(name) - 1, in, type, meaning },
const struct xb_control_name xb_control_fields[XB_FIELD__COUNT] = {
	XB_CONTROL_FIELDS(XB_CONTROL_FIELD_ROW_)
};

int xb_control_cmd_of(const char *name)
{
	for (int i = 0; i < XB_CMD__COUNT; i++)
		if (!strcmp(xb_control_commands[i].name, name))
			return i;
	return -1;
}
