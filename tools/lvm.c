// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The lvm2 side of dmcopy provision: lvm2's own commands run as they are
 * (lvcreate, lvchange, lvremove, lvmconfig), their messages shown, and
 * the volume group read through lvs's JSON report.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "provision.h"

/* ---------------------------------------------------------- commands --- */

/*
 * Run @argv (an lvm2 or e2fsprogs command) with its messages (errors,
 * warnings) on our stderr; its stdout into *@out (NUL-terminated, to
 * free(), NULL when it could not be read), or dropped when @out is NULL.
 * Returns its exit status, or -1 when it could not run or died of a
 * signal. In its own process group, so that ^C at the terminal reaches
 * only us.
 */
int run(char *const argv[], char **out)
{
	int fds[2] = { -1, -1 };
	size_t got = 0, room = 0;
	char *buf = NULL;
	bool nomem = false;
	pid_t pid;
	int status;

	if (out)
		*out = NULL;
	if (out && pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		if (out) {
			close(fds[0]);
			close(fds[1]);
		}
		return -1;
	}
	if (!pid) {
		static const char msg[] = ": cannot run this command\n";
		int null = out ? -1 : open("/dev/null", O_WRONLY);

		/* its notices ("Logical volume created") are not ours */
		dup2(out ? fds[1] : null, STDOUT_FILENO);
		/*
		 * ^C is for us: we stop between steps, the command in hand
		 * (an lvcreate, a tune2fs) finishes rather than dies half way.
		 */
		setpgid(0, 0);
		execvp(argv[0], argv);
		/* only async-signal-safe calls in the child of a threaded fork */
		if (write(STDERR_FILENO, argv[0], strlen(argv[0])) < 0 ||
		    write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			_exit(127);
		_exit(127);
	}
	if (out) {
		ssize_t n = 0;

		close(fds[1]);
		/* all of it, also after running out of memory: it must end */
		do {
			if (room - got < 4096 && !nomem) {
				char *grown = realloc(buf, room * 2 + 65536);

				if (grown) {
					buf = grown;
					room = room * 2 + 65536;
				} else {
					nomem = true;
				}
			}
			if (nomem) {
				char drain[4096];

				n = read(fds[0], drain, sizeof(drain));
			} else {
				n = read(fds[0], buf + got, room - got - 1);
				if (n > 0)
					got += n;
			}
		} while (n > 0 || (n < 0 && errno == EINTR));
		close(fds[0]);
		if (buf && !nomem) {
			buf[got] = '\0';
			*out = buf;
		} else {
			free(buf);
		}
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			if (out) {
				free(*out);
				*out = NULL;
			}
			return -1;
		}
	if (WIFEXITED(status))
		status = WEXITSTATUS(status) == 127 ? -1 : WEXITSTATUS(status);
	else
		status = -1;
	if (out && !*out && !status) {
		warnx("%s: out of memory for its output", argv[0]);
		status = -1;
	}
	return status;
}

/* LVM tags and names: letters, digits and "_+.-" (lvm(8) takes a few more). */
bool lvm_word(const char *s)
{
	if (!*s || *s == '-')
		return false;
	for (; *s; s++)
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
		    !(*s >= '0' && *s <= '9') && !strchr("_+.-", *s))
			return false;
	return true;
}

bool has_tag(const struct lv *lv, const char *tag)
{
	size_t n = strlen(tag);
	const char *p = lv->tags;

	while (*p) {
		if (!strncmp(p, tag, n) && (p[n] == ',' || !p[n]))
			return true;
		p = strchrnul(p, ',');
		if (*p)
			p++;
	}
	return false;
}


/* A string member of an lvs JSON row; "" when lvs left it out. */
static const char *row_value(struct json_object *row, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(row, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return "";
	return json_object_get_string(v);
}

/* The rows of report[*].lv of lvs's JSON, as struct lv. */
static int parse_lvs(const char *vg, struct json_object *root, struct lv **lvs)
{
	struct json_object *report, *part, *rows;
	struct lv *v = NULL;
	size_t i, j, n = 0, total = 0;

	if (!json_object_object_get_ex(root, "report", &report) ||
	    !json_object_is_type(report, json_type_array))
		goto bad;
	for (i = 0; i < json_object_array_length(report); i++) {
		part = json_object_array_get_idx(report, i);
		if (json_object_object_get_ex(part, "lv", &rows) &&
		    json_object_is_type(rows, json_type_array))
			total += json_object_array_length(rows);
	}
	v = calloc(total ? total : 1, sizeof(*v));
	if (!v) {
		warnx("out of memory");
		return -1;
	}
	for (i = 0; i < json_object_array_length(report); i++) {
		part = json_object_array_get_idx(report, i);
		if (!json_object_object_get_ex(part, "lv", &rows) ||
		    !json_object_is_type(rows, json_type_array))
			continue;
		for (j = 0; j < json_object_array_length(rows); j++) {
			struct json_object *row = json_object_array_get_idx(rows, j);
			const char *name = row_value(row, "lv_name");
			const char *size = row_value(row, "lv_size");
			const char *data = row_value(row, "data_percent");
			const char *tags = row_value(row, "lv_tags");
			struct lv *lv = &v[n];
			char *end;

			if (!json_object_is_type(row, json_type_object) || !*name)
				goto bad;
			if (snprintf(lv->name, sizeof(lv->name), "%s", name) >=
			    (int)sizeof(lv->name))
				goto bad;
			errno = 0;
			lv->size = strtoull(size, &end, 10);
			if (errno || end == size || *end)
				goto bad;
			snprintf(lv->attr, sizeof(lv->attr), "%s",
				 row_value(row, "lv_attr"));
			snprintf(lv->pool, sizeof(lv->pool), "%s",
				 row_value(row, "pool_lv"));
			/* empty for an inactive pool: unknown */
			lv->data_percent = *data ? strtod(data, NULL) : -1;
			if (strlen(tags) >= sizeof(lv->tags)) {
				warnx("%s/%s: too many tags to tell whether it is a clone",
				      vg, name);
				free(v);
				return -1;
			}
			snprintf(lv->tags, sizeof(lv->tags), "%s", tags);
			n++;
		}
	}
	*lvs = v;
	return (int)n;
bad:
	free(v);
	warnx("volume group '%s': cannot read the report of lvs --reportformat json",
	      vg);
	return -1;
}

/*
 * The logical volumes of @vg: name, size in bytes, attributes, pool, data
 * in use and tags, from lvs's JSON report (its form fixed on the command
 * line, whatever lvm.conf's report section says), only those @select
 * picks (lvm's selection syntax) unless it is NULL.
 * Returns how many (with *@lvs to free), or -1 after lvs or we said why.
 */
int list_lvs(const char *vg, const char *select, struct lv **lvs)
{
	/*
	 * The report settings JSON depends on, whatever lvm.conf says: with
	 * report/quoted = 0 lvs 2.03 prints strings without their closing
	 * quote, compact_output drops empty columns, prefixes renames them.
	 */
	char *argv[] = { "lvs", "--config",
			 "report { quoted = 1 compact_output = 0 prefixes = 0 }",
			 "--reportformat", "json", "--units", "b",
			 "--nosuffix", "-o",
			 "lv_name,lv_size,lv_attr,pool_lv,data_percent,lv_tags",
			 (char *)vg, select ? "--select" : NULL,
			 (char *)select, NULL };
	struct json_tokener *tok;
	struct json_object *root;
	char *out;
	int r;

	*lvs = NULL;
	r = run(argv, &out);
	if (r) {
		warnx("cannot list the logical volumes of volume group '%s' (lvs %s)",
		      vg, r < 0 ? "did not run" : "failed, see above");
		free(out);
		return -1;
	}
	tok = json_tokener_new();
	if (!tok) {
		free(out);
		warnx("out of memory");
		return -1;
	}
	root = json_tokener_parse_ex(tok, out, (int)strlen(out));
	if (!root || json_tokener_get_error(tok) != json_tokener_success) {
		warnx("volume group '%s': lvs --reportformat json printed what is not JSON",
		      vg);
		r = -1;
	} else {
		r = parse_lvs(vg, root, lvs);
	}
	json_object_put(root);
	json_tokener_free(tok);
	free(out);
	return r;
}

const struct lv *find_lv(const struct lv *lvs, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(lvs[i].name, name))
			return &lvs[i];
	return NULL;
}

int lv_remove(const char *vg, const char *name)
{
	char lv[600];
	char *argv[] = { "lvremove", "-y", lv, NULL };

	snprintf(lv, sizeof(lv), "%s/%s", vg, name);
	return run(argv, NULL);
}

/* An integer setting of lvm's configuration, or @dflt. */
int lvm_setting(const char *key, int dflt)
{
	char *argv[] = { "lvmconfig", "--type", "full", (char *)key, NULL };
	char *out, *eq;
	int v = dflt;

	if (run(argv, &out))
		return dflt;
	eq = strchr(out, '=');
	if (eq)
		v = atoi(eq + 1);
	free(out);
	return v;
}
