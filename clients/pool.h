/*
 * pool.h - the client's connections: opening them, the echo exchange, and
 * checking every byte that comes back.
 *
 * A connection sends a message of --size bytes and waits for all of its echo
 * before sending the next (ping-pong). Message bytes are pseudo-random,
 * computed from (connection, message number, offset), so any stretch of any
 * message can be regenerated to check an echo without keeping a copy, and a
 * server that swaps bytes between clients or messages is caught.
 *
 * The modes in loadgen.c are built from four phases:
 *   pool_grow          open more connections, each proving with one verified
 *                      echo that the server really serves it (a successful
 *                      connect() only proves the kernel queued it); then idle;
 *   pool_pingpong      connections marked active exchange messages back to
 *                      back for a while; every round trip is recorded;
 *   pool_idle          send nothing; only notice a server hanging up;
 *   pool_close_newest  shrink the set of open connections.
 */
#ifndef LOADGEN_POOL_H
#define LOADGEN_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "loop.h"
#include "stats.h"

/* Where the server is, and which local addresses the client sends from. */
typedef struct {
    struct sockaddr_storage addr;
    socklen_t addr_len;
    char name[64];         /* "127.0.0.1:9999", for messages */
    bool spread;           /* bind sockets to 127.0.0.2 .. 127.0.0.254 first */
    unsigned next_source;  /* which of those the next socket gets */
} target_t;

/* Parse a numeric address and port. 0, or -1 with a reason in *why. */
int target_resolve(target_t *t, const char *host, const char *port, const char **why);

/* A non-blocking socket with connect() under way: the fd, or -1 and errno. */
int target_connect(target_t *t);

typedef enum {
    CONN_CONNECTING, /* connect() under way */
    CONN_BUSY,       /* a message is out and its echo is not all back */
    CONN_IDLE,       /* connected, nothing outstanding */
    CONN_CLOSED,     /* closed by the client */
    CONN_FAILED,     /* given up; the pool's counters say why */
} conn_state_t;

typedef struct {
    int fd;              /* -1 once closed */
    uint32_t id;         /* index in the pool: seeds payloads, names errors */
    uint32_t msg;        /* number of the current message: seeds its payload */
    conn_state_t state;
    bool served;         /* its first echo came back intact */
    bool active;         /* pool_pingpong: send again as soon as an echo is in */
    int interest;        /* what the loop watches for: LOOP_READ, LOOP_WRITE */
    size_t sent;         /* bytes of the current message written so far */
    size_t received;     /* bytes of its echo read and verified so far */
    uint64_t started_ns; /* when connect() or the current message began */
} conn_t;

/*
 * Every connection is counted once: in served, or in the failure that kept it
 * from being served (connect_failed, refused, unanswered, corrupt, untried).
 * A served connection that later breaks is counted once more, in what broke
 * it (lost, corrupt, timed_out), whenever in the run that happens.
 */
typedef struct {
    size_t established;     /* connect() completed */
    size_t served;          /* first echo came back intact */
    size_t connect_failed;  /* connect() failed: refused, no port, no fd */
    size_t refused;         /* connected, then closed or reset before any echo */
    size_t unanswered;      /* connected, but no echo came before we gave up */
    size_t lost;            /* served, then closed, reset or went silent */
    size_t timed_out;       /* served, and still waiting for an echo when --timeout ended the run */
    size_t corrupt;         /* an echo differed from what was sent */
    size_t untried;         /* never opened: pool_grow gave up first */
    uint64_t bytes_verified; /* echoed bytes checked and found right */
    uint64_t round_trips;   /* echoes completed in the last ping-pong window */
    uint64_t window_ns;     /* how long that window actually lasted */
} pool_counts_t;

typedef struct {
    target_t *target;
    loop_t *loop;
    size_t msg_size;       /* bytes per message */
    conn_t *conns;         /* every connection ever opened, in order */
    size_t count;          /* how many of conns are in use */
    size_t capacity;       /* how many conns can hold */
    size_t settled;        /* connections served or failed before that */
    size_t busy;           /* connections waiting for an echo */
    size_t connect_window; /* most connections between connect() and first echo */
    pool_counts_t n;
    samples_t connect_ns;  /* connect() to established, per connection */
    samples_t rtt_ns;      /* round trips in the last ping-pong window */
    bool issuing;          /* ping-pong window open: active ones send again */
    uint64_t window_end;   /* round trips finished after this are not counted */
    bool timed_out;        /* the overall deadline passed */
    char first_error[256]; /* the first failure, for the one-line summary */
    uint8_t *send_buf;     /* outgoing bytes, generated just before write() */
    uint8_t *recv_buf;     /* incoming bytes */
    uint8_t *expect_buf;   /* what the incoming bytes should be */
    size_t buf_size;
} pool_t;

int pool_init(pool_t *p, target_t *target, size_t capacity, size_t msg_size);
void pool_free(pool_t *p); /* closes every connection */

/* Open `more` connections and wait until each is served or has failed. */
void pool_grow(pool_t *p, size_t more, uint64_t deadline);

/* Active connections ping-pong for duration_ns, then finish what is in flight. */
void pool_pingpong(pool_t *p, uint64_t duration_ns, uint64_t deadline);

/* Send nothing for duration_ns, watching for connections the server drops. */
void pool_idle(pool_t *p, uint64_t duration_ns, uint64_t deadline);

/* Close the `how_many` most recently opened idle, inactive connections. */
void pool_close_newest(pool_t *p, size_t how_many);

/* Connections currently open (idle or busy), not counting active ones. */
size_t pool_open_passive(const pool_t *p);

#endif /* LOADGEN_POOL_H */
