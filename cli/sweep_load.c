/*
 * sweep_load.c — the one way a command builds a sweep from what its user
 * typed: the sweep file (or the built-in seed study), a policy preset, the
 * --client file, then every --set and --grid in command-line order, checked
 * and refused with its reason when an axis cannot change any run. run,
 * list and replay share it, so an override means the same in each.
 */
#include <stdio.h>
#include <string.h>

#include "ana.h"
#include "cli.h"
#include "client_import.h"
#include "swp.h"
#include "textsafe.h"

int cli_dead_axes(const char *cmd, const swp_sweep *sw, int allow) {
  char msg[4096];
  int dead = swp_sweep_dead_axes(sw, msg, sizeof msg);
  if (!dead) return 0;
  for (char *line = msg, *next; line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    fprintf(stderr, "stormsweep %s: %s%s\n", cmd, allow ? "warning: " : "", line);
  }
  if (allow) return 0;
  fprintf(stderr,
          "stormsweep %s: %s: drop %s, change the setting that makes %s dead, or pass "
          "--allow-dead-axes to %s anyway (its runs would repeat each other)\n",
          cmd, sw->source, dead > 1 ? "those axes" : "the axis", dead > 1 ? "them" : "it", cmd);
  return 2;
}

int cli_sweep_load(const char *cmd, const cli_sweep_spec *spec, swp_sweep *sw) {
  char err[1024];
  swp_sweep_init(sw);
  int rc = spec->path ? swp_sweep_parse_file(sw, spec->path, err, sizeof err)
                      : swp_sweep_parse_seed_study(sw, err, sizeof err);
  if (!rc && spec->policy) {
    char kv[128];
    snprintf(kv, sizeof kv, "policy=%s", spec->policy);
    rc = swp_sweep_override_set(sw, kv, err, sizeof err);
  }
  if (!rc && spec->client) {
    swp_client_map map;
    rc = swp_client_load_target(spec->client, spec->client_flags, &map, err, sizeof err);
    if (!rc && spec->loud) swp_client_print(&map, spec->client, stderr, ana_term_fputs);
    if (!rc) rc = swp_client_apply_sweep(&map, spec->client, sw, err, sizeof err);
    if (rc) {
      cli_error(cmd, "--client %s", err);
      return 2;
    }
  }
  for (int i = 0; !rc && i < spec->n_overrides; i += 2)
    rc = !strcmp(spec->overrides[i], "--set")
             ? swp_sweep_override_set(sw, spec->overrides[i + 1], err, sizeof err)
             : swp_sweep_override_grid(sw, spec->overrides[i + 1], err, sizeof err);
  if (!rc) rc = swp_sweep_check(sw, err, sizeof err);
  if (rc) {
    fprintf(stderr, "stormsweep %s: %s\n", cmd, err);
    return 2;
  }
  return cli_dead_axes(cmd, sw, spec->allow_dead);
}
