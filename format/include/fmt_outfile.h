/*
 * fmt_outfile.h — every file a stormsweep command writes goes through here:
 * result files, CSV tables, JUnit reports, per-tick CSVs, plot data, scripts
 * and images, report directories.
 *
 * The rules, for every output:
 *   - it is built under a fresh name beside its final place (a file created
 *     O_CREAT | O_EXCL | O_NOFOLLOW, or a mkdtemp directory), so nothing
 *     planted there — a symbolic link, a hard link, a FIFO — is ever opened,
 *     followed or written through;
 *   - it reaches its final name only whole, by rename(2): a reader never sees
 *     half a file, and an interrupted command leaves the earlier file as it
 *     was;
 *   - without FMT_OUTFILE_FORCE it never replaces anything (renameat2
 *     RENAME_NOREPLACE, so not even a file that appeared meanwhile); with it,
 *     the replacement is that atomic rename — a symbolic link at the final
 *     name is replaced itself, never written through;
 *   - the file and its directory are synced before the command says it is
 *     written.
 * A private directory (fmt_outdir) holds several files built together (a
 * report, a plot's data and script) and the programs stormsweep runs on them
 * (gnuplot) only ever see files stormsweep made.
 */
#ifndef STORMSWEEP_FMT_OUTFILE_H
#define STORMSWEEP_FMT_OUTFILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

enum {
  FMT_OUTFILE_FORCE = 1 /* replace an existing file at the final name (atomically) */
};

/* One output file being written. */
typedef struct fmt_outfile {
  char *final;  /* where it goes */
  char *tmp;    /* the fresh name it is built under; NULL once committed or abandoned */
  FILE *stream; /* open on tmp (fmt_outfile_stream) */
  int fd;
  unsigned flags;
  int is_stdout; /* the output is "-": standard output, written as it comes */
} fmt_outfile;

/* Starts writing path: refuses a directory, and an existing path unless
 * FORCE ("already exists (use --force to overwrite)"); creates the fresh
 * file beside it (mode 0666 & ~umask). -1 with a message naming path.
 * path "-" is standard output (a stream only; no rename, no sync). */
int fmt_outfile_begin(fmt_outfile *f, const char *path, unsigned flags, char *err,
                      size_t errlen);
/* A stdio stream on the fresh file (owned by f). NULL when out of memory. */
FILE *fmt_outfile_stream(fmt_outfile *f);
/* The fresh file's name, for a library that writes by name (HDF5). */
const char *fmt_outfile_tmp_name(const fmt_outfile *f);
/* Flushes, syncs and renames the file into place (see the rules above). On
 * any failure the fresh file is removed and -1 returned with a message. */
int fmt_outfile_commit(fmt_outfile *f, char *err, size_t errlen);
/* Removes the fresh file (nothing reaches the final name). NULL-safe. */
void fmt_outfile_abandon(fmt_outfile *f);

/* A private directory built beside a final directory DIR, installed whole. */
typedef struct fmt_outdir {
  char final[4096];  /* DIR as given, without trailing slashes */
  char parent[4096]; /* its directory */
  char base[1024];   /* its last component */
  char tmp[4096];    /* the private build directory ("" until made or once installed) */
  int replace;       /* DIR exists and may be replaced */
} fmt_outdir;

/* Checks dir and makes the private build directory. An existing dir may be
 * replaced only when it is ours, not writable by others, not a symbolic
 * link, and empty or accepted by is_ours(dir) (may be NULL: empty only). */
int fmt_outdir_begin(fmt_outdir *d, const char *dir, int (*is_ours)(const char *dir),
                     char *err, size_t errlen);
/* Only the private build directory, beside path (for files installed one
 * by one with fmt_outdir_install_file, then fmt_outdir_abandon). */
int fmt_outdir_private(fmt_outdir *d, const char *path, char *err, size_t errlen);
/* A new file name in directory dir (a build directory: d->tmp), opened
 * O_CREAT | O_EXCL | O_NOFOLLOW for writing. NULL with a message on failure. */
FILE *fmt_dir_file_create(const char *dir, const char *name, char *err, size_t errlen);
/* Closes a stream from fmt_dir_file_create, checking that every write made it. */
int fmt_dir_file_close(FILE *f, const char *dir, const char *name, char *err, size_t errlen);
/* Moves the build directory to its final name: a rename, or an atomic
 * exchange with the earlier one (RENAME_EXCHANGE), which is then removed. */
int fmt_outdir_install(fmt_outdir *d, char *err, size_t errlen);
/* Installs one file of the build directory as the single file dest (the
 * fmt_outfile rules: never over anything without FORCE; atomic with it). */
int fmt_outdir_install_file(fmt_outdir *d, const char *name, const char *dest, unsigned flags,
                            char *err, size_t errlen);
/* Removes the build directory and everything in it (never following a
 * link). NULL-safe; nothing when already installed. */
void fmt_outdir_abandon(fmt_outdir *d);

/* ---- the primitives the rules are made of (also used by the writer) ---- */

/* fsync of the directory holding path; of the file path. */
int fmt_fsync_dir(const char *path);
int fmt_fsync_path(const char *path);
/* Renames from to to (replace 0: failing with EEXIST if to exists), then
 * syncs the directory. */
int fmt_rename_into_place(const char *from, const char *to, int replace);
/* The file path names: path with its last component's symbolic links
 * followed (a link's relative target is taken from the link's directory),
 * malloc'd. What owns a result file — its lock, its journal, the name a
 * rebuild replaces — is keyed by this, so two names of one file are one. */
char *fmt_path_resolved(const char *path);
/* path followed by suffix, malloc'd (NULL: out of memory). */
char *fmt_path_suffixed(const char *path, const char *suffix);
/* Creates a new empty file "path.TAG-XXXXXX" beside path (mkstemp: O_EXCL)
 * and returns its descriptor, with its name in *name (malloc'd); -1 with
 * errno set and *name NULL on failure. */
int fmt_mkstemp_beside(const char *path, const char *tag, char **name);
/* Removes the tree at path without following any symbolic link. */
void fmt_tree_remove(const char *path);

#endif
