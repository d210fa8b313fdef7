/* ioarrive - memstor's arrival-driven (open-loop) I/O generator.
 *
 * target.c: the target, named twice (options.c compares the names): an existing regular file (ioarrive
 * never creates or extends one: memstor makes its test files itself) or a block device that is not mounted,
 * not swap and not held by device-mapper/md, nor any of its partitions. Opened O_DIRECT unless --buffered;
 * read-only when nothing is written.
 */
#include "ioarrive.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The "MAJ:MIN" of the whole disk a block device M:m belongs to (itself when it is a disk). */
static void disk_of(unsigned maj, unsigned min, char *out, size_t outlen)
{
    char path[128], real[4096], buf[64];
    snprintf(out, outlen, "%u:%u", maj, min);
    snprintf(path, sizeof path, "/sys/dev/block/%u:%u", maj, min);
    if (!realpath(path, real)) return;
    size_t len = strlen(real);
    if (len + 16 >= sizeof real) return;
    strcat(real, "/partition");
    if (access(real, F_OK)) return;  /* not a partition */
    real[len] = 0;
    strcat(real, "/../dev");
    FILE *f = fopen(real, "r");
    if (!f) return;
    if (fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\n")] = 0;
        snprintf(out, outlen, "%s", buf);
    }
    fclose(f);
}

static int holders(unsigned maj, unsigned min)
{
    char path[128];
    snprintf(path, sizeof path, "/sys/dev/block/%u:%u/holders", maj, min);
    DIR *d = opendir(path);
    if (!d) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Refuse a block device in use: mounted, or a disk with a mounted partition; swap; held by dm/md/LVM. */
static void refuse_in_use(const char *name, dev_t rdev)
{
    char self[64], line[4096], other[64];
    snprintf(self, sizeof self, "%u:%u", major(rdev), minor(rdev));
    FILE *f = fopen("/proc/self/mountinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        unsigned maj, min;
        char mnt[2048];
        if (sscanf(line, "%*u %*u %u:%u %*s %2047s", &maj, &min, mnt) != 3) continue;
        if (maj == major(rdev) && min == minor(rdev))
            die_usage("block device %s is mounted on %s: refusing to write to a mounted device", name, mnt);
        if (maj == 0) continue;
        disk_of(maj, min, other, sizeof other);  /* a mounted partition of the target (a whole disk) */
        if (!strcmp(other, self))
            die_usage("block device %s holds a mounted partition (%u:%u on %s): refusing it", name, maj, min, mnt);
    }
    if (f) fclose(f);
    f = fopen("/proc/swaps", "r");
    while (f && fgets(line, sizeof line, f)) {
        char dev[2048];
        struct stat st;
        if (sscanf(line, "%2047s", dev) == 1 && !stat(dev, &st) && S_ISBLK(st.st_mode) && st.st_rdev == rdev)
            die_usage("block device %s is in use as swap", name);
    }
    if (f) fclose(f);
    if (holders(major(rdev), minor(rdev)))
        die_usage("block device %s is held by another device (device-mapper, md or LVM): refusing it", name);
}

/* The request queue's size (nr_requests) of the disk holding device M:m: a submit call blocks once that many
 * requests wait in it. Major 0 (tmpfs, overlay) or no sysfs: unknown (0). */
static void request_queue(unsigned maj, unsigned min, struct target *t)
{
    char path[128];
    if (maj == 0) return;
    disk_of(maj, min, t->queue_disk, sizeof t->queue_disk);
    snprintf(path, sizeof path, "/sys/dev/block/%s/queue/nr_requests", t->queue_disk);
    FILE *f = fopen(path, "r");
    if (!f || fscanf(f, "%u", &t->queue_requests) != 1) t->queue_requests = 0;
    if (f) fclose(f);
}

void open_target(const struct job *j, struct target *t)
{
    struct stat st;
    memset(t, 0, sizeof *t);
    t->lbs = 512;
    if (stat(j->target, &st) < 0) {
        if (errno == ENOENT)
            die_usage("target %s does not exist: ioarrive never creates files (memstor testfile makes one)",
                      j->target);
        die_usage("cannot stat target %s: %s", j->target, strerror(errno));
    }
    int writes = j->dir[DIR_WRITE].active;
    if (S_ISBLK(st.st_mode)) {
        t->is_block = 1;
        refuse_in_use(j->target, st.st_rdev);
    } else if (!S_ISREG(st.st_mode)) {
        die_usage("target %s is neither a regular file nor a block device", j->target);
    }
    int flags = (writes ? O_RDWR : O_RDONLY) | O_CLOEXEC | (j->direct ? O_DIRECT : 0);
    t->fd = open(j->target, flags);
    if (t->fd < 0 && errno == EINVAL && j->direct)
        die_usage("target %s: O_DIRECT is not supported there (tmpfs?): use --buffered", j->target);
    if (t->fd < 0)
        die_usage("cannot open target %s%s: %s", j->target, writes ? " for writing" : "", strerror(errno));
    if (t->is_block) {
        int lbs = 0;
        if (ioctl(t->fd, BLKGETSIZE64, &t->size_bytes) < 0)
            die("BLKGETSIZE64 on %s: %s", j->target, strerror(errno));
        if (ioctl(t->fd, BLKSSZGET, &lbs) == 0 && lbs > 0)
            t->lbs = (unsigned)lbs;
    } else {
        t->size_bytes = (uint64_t)st.st_size;
    }
    dev_t dev = t->is_block ? st.st_rdev : st.st_dev;
    request_queue(major(dev), minor(dev), t);
}
