/* my_loop.c: my_loop.py's loop in C, with no crashsweep code in it: it files two issues
 * (create_a, create_b) with the tracker over HTTP on raw sockets and saves its progress in
 * state.json (in its current folder) after each reply, so that a restart skips what is done.
 *
 * A save is: write state.json.tmp, fsync it, rename it over state.json, fsync the folder.
 *   --no-fsync  skips both fsyncs (a crash still finds the rename; a power cut may not)
 *   --no-keys   sends no Idempotency-Key header (a restart's re-sent request files again)
 *
 * Swept with its points at its system calls (spec/POINTS.md section 3):
 *   cc -O2 -o my_loop my_loop.c
 *   crashsweep sweep --points syscalls --target ./my_loop --check my_c_loop_check:check
 *
 * The run ID: derived from CRASHSWEEP_WORLD when a merging sweep sets it (the same world, the
 * same ID), else 32 random hex digits. The tracker: CRASHSWEEP_TRACKER_URL, e.g.
 * http://127.0.0.1:8765/spaces/s-1 (an IP address: no name lookup).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define STATE "state.json"
#define TMP "state.json.tmp"

static const char *CALLS[2] = {"create_a", "create_b"};
static const char *TITLES[2] = {"disk full on db-1", "fan noise on db-2"};

struct state {
    char run[64];
    long filed[2]; /* the issue's number, 0: not filed yet */
};

static void fail(const char *what) {
    fprintf(stderr, "my_loop: %s: %s\n", what, errno ? strerror(errno) : "failed");
    exit(1);
}

static void write_all(int fd, const char *data, size_t size) {
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail("write");
        data += n;
        size -= (size_t)n;
    }
}

/* The committed state only (a temp file a crash left is ignored); 0 when there is none. */
static int load(struct state *s) {
    char text[512] = {0};
    int fd = open(STATE, O_RDONLY);
    if (fd < 0) return 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0 || sscanf(text, "{\"run\": \"%63[^\"]\", \"create_a\": %ld, \"create_b\": %ld}", s->run, &s->filed[0],
                         &s->filed[1]) != 3) {
        errno = 0;
        fail("state.json is unreadable"); /* as my_loop.py's json.loads would fail */
    }
    return 1;
}

static void save(const struct state *s, int fsyncs) {
    char text[256];
    int size = snprintf(text, sizeof text, "{\"run\": \"%s\", \"create_a\": %ld, \"create_b\": %ld}\n", s->run, s->filed[0],
                        s->filed[1]);
    int fd = open(TMP, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) fail("open " TMP);
    write_all(fd, text, (size_t)size);
    if (fsyncs && fsync(fd) != 0) fail("fsync " TMP);
    close(fd);
    if (rename(TMP, STATE) != 0) fail("rename");
    if (fsyncs) {
        int dir = open(".", O_RDONLY | O_DIRECTORY);
        if (dir < 0 || fsync(dir) != 0) fail("fsync .");
        close(dir);
    }
}

static void fresh_run(char *run, size_t size) {
    const char *world = getenv("CRASHSWEEP_WORLD");
    if (world && *world) {
        snprintf(run, size, "w%.31s", world);
        return;
    }
    unsigned char bytes[16];
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd < 0 || read(fd, bytes, sizeof bytes) != (ssize_t)sizeof bytes) fail("/dev/urandom");
    close(fd);
    for (int i = 0; i < 16; i++) snprintf(run + 2 * i, size - 2 * (size_t)i, "%02x", bytes[i]);
}

/* POST {base}/issues; the issue's number from the answer ("number": N). */
static long create_issue(const char *url, const char *title, const char *run, const char *call, int keys) {
    char host[64], path[256] = "";
    int port = 80;
    if (sscanf(url, "http://%63[^:/]:%d%255s", host, &port, path) < 2) {
        errno = 0;
        fail("CRASHSWEEP_TRACKER_URL is not http://IP:PORT[/spaces/NAME]");
    }
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        errno = 0;
        fail("the tracker's host is not an IPv4 address");
    }
    char body[512], request[1024], key[160] = "";
    int length = snprintf(body, sizeof body, "{\"title\": \"%s\", \"body\": \"\", \"run\": \"%s\", \"call\": \"%s\"}",
                          title, run, call);
    if (keys) snprintf(key, sizeof key, "Idempotency-Key: %s:%s\r\n", run, call);
    int size = snprintf(request, sizeof request,
                        "POST %s/issues HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
                        "Content-Length: %d\r\nConnection: close\r\n%s\r\n%s",
                        path, host, port, length, key, body);
    int sock = socket(AF_INET, SOCK_STREAM, 0);
    if (sock < 0 || connect(sock, (struct sockaddr *)&addr, sizeof addr) != 0) fail("connect");
    write_all(sock, request, (size_t)size); /* one write: the request's head and body together */
    char answer[4096] = {0};
    size_t got = 0;
    ssize_t n;
    while (got < sizeof answer - 1 && (n = read(sock, answer + got, sizeof answer - 1 - got)) > 0) got += (size_t)n;
    close(sock);
    int status = 0;
    const char *number = strstr(answer, "\"number\":");
    if (sscanf(answer, "HTTP/1.%*d %d", &status) != 1 || status / 100 != 2 || number == NULL) {
        errno = 0;
        fprintf(stderr, "my_loop: the tracker answered: %.200s\n", answer);
        exit(1);
    }
    return strtol(number + strlen("\"number\":"), NULL, 10);
}

int main(int argc, char **argv) {
    int fsyncs = 1, keys = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--no-fsync") == 0) fsyncs = 0;
        else if (strcmp(argv[i], "--no-keys") == 0) keys = 0;
        else {
            fprintf(stderr, "usage: %s [--no-fsync] [--no-keys]\n", argv[0]);
            return 2;
        }
    }
    const char *url = getenv("CRASHSWEEP_TRACKER_URL");
    if (url == NULL) url = "http://127.0.0.1:8765";
    struct state s = {.filed = {0, 0}};
    if (!load(&s)) {
        fresh_run(s.run, sizeof s.run);
        save(&s, fsyncs); /* the run ID is durable before any request goes out */
    }
    for (int i = 0; i < 2; i++) {
        if (s.filed[i]) continue;
        s.filed[i] = create_issue(url, TITLES[i], s.run, CALLS[i], keys);
        save(&s, fsyncs);
    }
    return 0;
}
