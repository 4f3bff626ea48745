/* SPDX-License-Identifier: GPL-2.0 */
/*
 * taprootctl's command tables (ctl/cmd.c).
 */
#ifndef TAPROOT_CTL_CMD_H
#define TAPROOT_CTL_CMD_H


/* ------------------------------------------------------ command tables */

/*
 * A row of a command table in bpftool's style. A table is an array ending
 * with a row whose name is NULL. Aliases are more rows with the same fn.
 */
struct taproot_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;	/* synopsis of the arguments, "" for none */
	const char *help;	/* one line: what the command does */
	const char *doc;	/* more lines for "help COMMAND", or NULL */
};

/*
 * Select the row of @table that @word names: the row whose name equals
 * @word, else the only row whose name starts with @word. On success
 * *@row points into @table. Errors: -ENOENT when no row matches,
 * -TAPROOT_EAMBIGUOUS when @word starts several names (the message lists
 * them).
 */
int taproot_cmd_find(const struct taproot_command *table, const char *word,
		     const struct taproot_command **row);

#endif /* TAPROOT_CTL_CMD_H */
