// SPDX-License-Identifier: GPL-2.0
/*
 * taprootctl load | unload: put taproot.ko into the kernel and take it out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "taprootctl.h"

/*
 * Append NAME=VALUE to the parameter string *@params, quoting VALUE when it
 * holds blanks, as the kernel's parser (next_arg) reads it.
 */
static int add_param(char **params, const char *arg)
{
	const char *value = strchr(arg, '=') + 1;
	bool quote = strpbrk(value, " \t\n") != NULL;
	char *s;

	if (strchr(arg, '"'))
		return p_usage("'load': a parameter cannot contain '\"': %s", arg);
	if (asprintf(&s, "%s%s%.*s%s%s%s", *params ? *params : "", *params ? " " : "",
		     (int)(value - arg), arg, quote ? "\"" : "", value,
		     quote ? "\"" : "") < 0)
		return p_err("out of memory");
	free(*params);
	*params = s;
	return EXIT_OK;
}

int do_load(int argc, char **argv)
{
	const char *ko = NULL;
	char *params = NULL, *path = NULL;
	struct taproot_json *j;
	int err, ret = EXIT_OK;

	for (; argc; argc--, argv++) {
		if (!strcmp(*argv, "--ko")) {
			if (argc < 2) {
				ret = p_usage("'load --ko' needs a PATH");
				goto out;
			}
			argc--, argv++;
			ko = *argv;
		} else if (!strncmp(*argv, "--ko=", 5)) {
			ko = *argv + 5;
		} else if (**argv == '-') {
			ret = p_usage("'load': unknown option '%s'", *argv);
			goto out;
		} else if (**argv != '=' && strchr(*argv, '=')) {
			ret = add_param(&params, *argv);
			if (ret != EXIT_OK)
				goto out;
		} else {
			ret = p_usage("'load' needs PARAM=VALUE arguments, not '%s'", *argv);
			goto out;
		}
	}
	if (ko && !ko[0]) {
		ret = p_usage("'load --ko' needs a PATH");
		goto out;
	}

	err = taproot_module_load(ko, params, &path);
	if (err < 0) {
		ret = p_err("%s", taproot_errmsg(err));
		goto out;
	}
	if (json_output) {
		j = json_begin();
		if (!j) {
			ret = EXIT_ERR;
			goto out;
		}
		taproot_json_object_begin(j);
		taproot_json_key_string(j, "loaded", path);
		taproot_json_key_string(j, "params", params ? params : "");
		taproot_json_object_end(j);
		ret = json_end(j);
	} else {
		printf("loaded %s%s%s\n", path, params ? " " : "", params ? params : "");
	}
out:
	free(params);
	free(path);
	return ret;
}

int do_unload(int argc, char **argv)
{
	int err;

	if (argc)
		return p_usage("'unload' takes no arguments, not '%s'", argv[0]);
	err = taproot_module_unload();
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	return p_ok();
}
