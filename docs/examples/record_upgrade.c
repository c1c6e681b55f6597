/* record_upgrade.c: upgrade a 4 KiB record in place from version 1 to 2, with a checksum, in
 * its current folder; with --wal, through a write-ahead copy. No crashsweep code in it.
 *
 * The record is 4096 bytes: an 8-byte FNV-1a hash of the body (little-endian), then the body
 * ("version N\n" padded). The upgrade overwrites it with one 4096-byte pwrite and an fsync. A
 * power cut between the two may leave part of the write on disk (a torn write); the restart
 * finds a record whose hash fails, says so and exits 3: it cannot go on. With --wal the new
 * record is first written whole to record.wal and fsynced (and its folder): a restart that
 * finds a whole copy redoes the upgrade from it, one whose copy is torn drops the copy (the
 * record itself was not yet touched).
 *
 *   cc -O2 -o record_upgrade record_upgrade.c
 *   crashsweep sweep --points syscalls --target ./record_upgrade --check record_upgrade_check:check \
 *       --faults power-loss --persistence alice
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIZE 4096

static uint64_t fnv1a(const unsigned char *data, size_t length) {
    uint64_t hash = 14695981039346656037ULL;
    for (size_t i = 0; i < length; i++) {
        hash ^= data[i];
        hash *= 1099511628211ULL;
    }
    return hash;
}

static void record(int version, unsigned char *out) {
    memset(out + 8, version == 1 ? '.' : '#', SIZE - 8);
    int n = snprintf((char *)out + 8, SIZE - 8, "version %d\n", version);
    out[8 + n] = version == 1 ? '.' : '#'; /* snprintf's terminating zero is padding too */
    uint64_t hash = fnv1a(out + 8, SIZE - 8);
    for (int i = 0; i < 8; i++) out[i] = (unsigned char)(hash >> (8 * i));
}

static int valid(const unsigned char *data, ssize_t length) {
    if (length != SIZE) return 0;
    uint64_t hash = fnv1a(data + 8, SIZE - 8);
    for (int i = 0; i < 8; i++)
        if (data[i] != (unsigned char)(hash >> (8 * i))) return 0;
    return 1;
}

static void fail(const char *what) {
    perror(what);
    exit(1);
}

static void write_at(const char *name, const unsigned char *data, int flags) {
    int fd = open(name, O_WRONLY | flags, 0644);
    if (fd < 0 || pwrite(fd, data, SIZE, 0) != SIZE || fsync(fd) != 0) fail(name);
    close(fd);
}

static void sync_dir(void) {
    int fd = open(".", O_RDONLY);
    if (fd < 0 || fsync(fd) != 0) fail(".");
    close(fd);
}

static ssize_t read_all(const char *name, unsigned char *out) {
    int fd = open(name, O_RDONLY);
    if (fd < 0) return -1;
    ssize_t n = read(fd, out, SIZE + 1);
    close(fd);
    return n;
}

int main(int argc, char **argv) {
    int wal = argc > 1 && strcmp(argv[1], "--wal") == 0;
    unsigned char old[SIZE], new[SIZE], data[SIZE + 1];
    record(1, old);
    record(2, new);
    if (access("record", F_OK) != 0) { /* version 1, made durable: a temporary file, renamed, the folder synced */
        write_at("record.tmp", old, O_CREAT | O_TRUNC);
        if (rename("record.tmp", "record") != 0) fail("rename");
        sync_dir();
    }
    if (wal && access("record.wal", F_OK) == 0) {
        if (valid(data, read_all("record.wal", data))) write_at("record", data, 0); /* redo the upgrade */
        if (unlink("record.wal") != 0) fail("unlink");
        sync_dir();
    }
    ssize_t n = read_all("record", data);
    if (!valid(data, n)) {
        printf("record is corrupt: its checksum does not match\n");
        return 3;
    }
    if (memcmp(data, new, SIZE) != 0) {
        if (wal) {
            write_at("record.wal", new, O_CREAT | O_TRUNC);
            sync_dir();
        }
        write_at("record", new, 0);
        if (wal) {
            if (unlink("record.wal") != 0) fail("unlink");
            sync_dir();
        }
    }
    return 0;
}
