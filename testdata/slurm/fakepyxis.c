/*
 * fakepyxis: a SPANK plugin standing in for NVIDIA Pyxis on the test cluster.
 *
 * Pyxis and enroot are not packaged for Debian, yet the sbatch scripts wlc
 * generates pass --container-* options that srun/sbatch reject unless a
 * plugin registers them. This plugin registers the same option names, runs
 * no container, and exports every option it received into each task as
 * WLC_FAKEPYXIS_<NAME> (flags as "1") so tests can assert what srun got.
 *
 * Build: gcc -shared -fPIC -o fakepyxis.so fakepyxis.c  (needs libslurm-dev)
 * Load:  plugstack.conf line "required /path/to/fakepyxis.so"
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include <slurm/spank.h>

SPANK_PLUGIN(fakepyxis, 1);

struct opt {
	const char *name; /* option name without the leading "--" */
	const char *env;  /* suffix of WLC_FAKEPYXIS_ */
	int has_arg;
};

static const struct opt opts[] = {
	{"container-image", "IMAGE", 1},
	{"container-mounts", "MOUNTS", 1},
	{"container-workdir", "WORKDIR", 1},
	{"container-name", "NAME", 1},
	{"container-save", "SAVE", 1},
	{"container-env", "ENV", 1},
	{"container-mount-home", "MOUNT_HOME", 0},
	{"no-container-mount-home", "NO_MOUNT_HOME", 0},
	{"container-remap-root", "REMAP_ROOT", 0},
	{"no-container-remap-root", "NO_REMAP_ROOT", 0},
	{"container-entrypoint", "ENTRYPOINT", 0},
	{"no-container-entrypoint", "NO_ENTRYPOINT", 0},
	{"container-writable", "WRITABLE", 0},
	{"container-readonly", "READONLY", 0},
};

#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static char *vals[NOPTS];

static int on_option(int val, const char *optarg, int remote)
{
	(void)remote;
	if (val < 0 || (size_t)val >= NOPTS)
		return -1;
	free(vals[val]);
	/* In slurmstepd a flag arrives as "" rather than NULL, so flags are
	 * told apart by the table, not by optarg. */
	vals[val] = strdup(opts[val].has_arg && optarg ? optarg : "1");
	return vals[val] ? 0 : -1;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	for (size_t i = 0; i < NOPTS; i++) {
		struct spank_option o = {
			.name = (char *)opts[i].name,
			.arginfo = opts[i].has_arg ? "ARG" : NULL,
			.usage = "accepted and exported as WLC_FAKEPYXIS_* "
				 "(fakepyxis: test stand-in for pyxis)",
			.has_arg = opts[i].has_arg,
			.val = (int)i,
			.cb = on_option,
		};
		if (spank_option_register(sp, &o) != ESPANK_SUCCESS) {
			slurm_error("fakepyxis: cannot register --%s", opts[i].name);
			return -1;
		}
	}
	return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	char key[64];

	(void)ac;
	(void)av;
	for (size_t i = 0; i < NOPTS; i++) {
		if (!vals[i])
			continue;
		snprintf(key, sizeof(key), "WLC_FAKEPYXIS_%s", opts[i].env);
		if (spank_setenv(sp, key, vals[i], 1) != ESPANK_SUCCESS)
			slurm_error("fakepyxis: cannot set %s", key);
	}
	return 0;
}
