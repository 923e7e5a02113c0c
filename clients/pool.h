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
 * The modes (stall.c, c10k.c, hold.c, scan.c) are built from these phases:
 *   pool_grow          open more connections, each proving with one verified
 *                      echo that the server really serves it (a successful
 *                      connect() only proves the kernel queued it); then idle;
 *   pool_window        connections marked active exchange messages for a
 *                      while: closed-loop (the next message as soon as the
 *                      last echo is back) or open-loop (on a fixed schedule,
 *                      see below); every round trip is recorded;
 *   pool_drain         the echoes still owed when the window closed come
 *                      back (they are timed too, but not counted in msgs);
 *   pool_tail          half-close every connection and read until the server
 *                      closes: any byte then is one it should not have sent;
 *   pool_idle          send nothing; only notice a server hanging up;
 *   pool_close_newest  shrink the set of open connections.
 *
 * Open loop (--rate R): slot j of the schedule is due at window start +
 * j / R seconds and belongs to active connection j mod A (A active
 * connections), so each connection's sends are due at fixed times A / R
 * seconds apart. A connection keeps at most one message in flight: when a send falls
 * due while its previous echo is still out, the send waits in that
 * connection's backlog (no memory: it is the connection's slots that are due
 * and not yet sent) and goes out, in order, the moment the echo is back.
 * Every round trip is timed from the slot's time, not from the write, so
 * the time a message spent waiting behind a slow server is counted
 * (wrk2's answer to coordinated omission). Sends the client itself made late
 * (it was free, the slot was due, but the loop got there late) are counted
 * apart, as the client's fault.
 */
#ifndef LOADGEN_POOL_H
#define LOADGEN_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "loop.h"
#include "stats.h"

/*
 * A send made this long after the client could have made it (slot due and
 * connection free) is late by the client's own fault.
 */
#define LATE_NS NS_PER_MS

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

/*
 * Whether a failed socket(), bind() or connect() is the client's fault, not
 * the server's: out of descriptors (EMFILE, ENFILE), of local ports
 * (EADDRNOTAVAIL, EADDRINUSE from bind) or of kernel memory (ENOBUFS,
 * ENOMEM). A non-blocking TCP connect() answers EAGAIN only for want of
 * something local too (connect(2): insufficient entries in the routing
 * cache; a port, on some kernels); a server that will not take the
 * connection refuses it or lets it time out.
 */
bool connect_error_is_clients(int err);

/*
 * Whether a failed write() is the connection's fault: the server reset or
 * left it (EPIPE, ECONNRESET), or the path to it broke. Any other failure is
 * the client's own (ENOBUFS, ENOMEM: the kernel was short of memory for
 * loadgen; EBADF, EFAULT, EINVAL: a bug in loadgen), never the server's.
 */
bool write_error_is_peers(int err);

typedef enum {
    CONN_CONNECTING, /* connect() under way */
    CONN_BUSY,       /* a message is out and its echo is not all back */
    CONN_IDLE,       /* connected, nothing outstanding */
    CONN_TAIL,       /* half-closed by pool_tail: waiting for the server's close */
    CONN_CLOSED,     /* closed by the client */
    CONN_FAILED,     /* given up; the pool's counters say why */
} conn_state_t;

typedef struct {
    int fd;              /* -1 once closed */
    uint32_t id;         /* the run's number for it: seeds payloads, names errors */
    uint32_t msg;        /* number of the current message: seeds its payload */
    conn_state_t state;
    bool served;         /* its first echo came back intact */
    bool active;         /* pool_window: exchanges messages (the others stay idle) */
    int interest;        /* what the loop watches for: LOOP_READ, LOOP_WRITE */
    size_t sent;         /* bytes of the current message written so far */
    size_t received;     /* bytes of its echo read and verified so far */
    uint64_t started_ns; /* when connect() or the current message was due (timed from) */
    uint64_t done_ns;    /* when its last echo came back */
    uint64_t lag_ns;     /* open loop: how late the client sent the current message */
    bool in_window;      /* the current message was due inside the window: time it */
    uint32_t window_echoes; /* echoes that came back inside the window */
    uint32_t slot_index; /* open loop: its place among the active connections */
    uint64_t sched_sent; /* open loop: how many of its slots it has sent */
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
    size_t connect_failed;  /* connect() failed (refused, no port, no fd) or had not
                               completed when we gave up (a full accept queue) */
    size_t refused;         /* connected, then closed or reset before any echo */
    size_t unanswered;      /* connected, but no echo came before we gave up */
    size_t lost;            /* served, then closed, reset or went silent */
    size_t timed_out;       /* served, and still waiting for an echo when --timeout ended the run */
    size_t corrupt;         /* an echo differed from what was sent */
    size_t untried;         /* never opened: pool_grow gave up first */
    size_t client_errors;   /* connections lost to loadgen's own failure: no fd, no
                               port, no loop registration, a write() refused on its own
                               side (ENOBUFS, ENOMEM); never the server's */
    size_t unclosed;        /* half-closed by pool_tail, and not closed by the server
                               when the tail's time ran out */
    uint64_t duplicated;    /* bytes that arrived when no echo was owed */
    uint64_t bytes_verified; /* echoed bytes checked and found right */
    uint64_t round_trips;   /* echoes completed in the last window */
    uint64_t window_ns;     /* how long that window actually lasted */
    uint64_t sends;         /* messages sent in the last window */
    uint64_t late_sends;    /* open loop: sent over LATE_NS after the client could have */
    uint64_t lag_max_ns;    /* open loop: the worst of those delays */
    size_t in_flight_at_end; /* echoes still owed when the window closed */
} pool_counts_t;

typedef struct {
    target_t *target;
    loop_t *loop;
    size_t msg_size;       /* bytes per message */
    conn_t *conns;         /* every connection ever opened, in order */
    size_t count;          /* how many of conns are in use */
    size_t capacity;       /* how many conns can hold */
    uint32_t first_id;     /* the id of conns[0]: with --threads, each worker's connections
                              are numbered after the previous worker's, so that no two
                              connections of a run send the same bytes */
    size_t settled;        /* connections served or failed before that */
    size_t busy;           /* connections waiting for an echo */
    size_t connect_window; /* most connections between connect() and first echo */
    pool_counts_t n;
    histogram_t *connect_ns; /* connect() to established, per connection */
    histogram_t *rtt_ns;   /* round trips of the messages due in the last window */
    /*
     * The same round trips in two parts (open loop): the send lag, how long
     * after it could have gone the client sent each message (the client's
     * share: its own loop or the host held it up), and the service time,
     * the rest (the server's and the network's, its own backlog included).
     */
    histogram_t *lag_ns, *service_ns;
    bool issuing;          /* closed loop: window open, active ones send again */
    uint64_t window_start; /* messages due before this are not timed */
    uint64_t window_end;   /* echoes finished after this are not counted in msgs */
    double rate;           /* open loop: messages per second in total; 0: closed loop */
    conn_t **slots;        /* open loop: the active connections, by slot_index */
    size_t slot_count;     /* how many */
    uint64_t next_slot;    /* open loop: the first slot of the schedule not yet visited */
    bool window_open;      /* pool_window is running */
    size_t done_after_end; /* echoes back after window_end while pool_window ran */
    size_t sent_after_end; /* messages sent after window_end while pool_window ran */
    bool timed_out;        /* the overall deadline passed */
    bool tailed;           /* pool_tail ran: n.unclosed is known */
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

/*
 * Active connections exchange messages for duration_ns: closed-loop when
 * rate is 0, otherwise open-loop at `rate` messages per second in total.
 */
void pool_window(pool_t *p, uint64_t duration_ns, double rate, uint64_t deadline);

/* Drop the last window's figures, as a window does first (crew.c: a worker that runs none). */
void pool_forget_window(pool_t *p);

/* After pool_window: wait (10 s at most) for the echoes still owed. */
void pool_drain(pool_t *p, uint64_t deadline);

/*
 * Half-close every open connection and read until the server closes it:
 * bytes then count as duplicated, a reset as lost, and a connection still
 * open once no other has closed for tail_ns (10 s in all at most, and not
 * past the run's deadline unless that leaves less than tail_ns) as unclosed.
 */
void pool_tail(pool_t *p, uint64_t tail_ns, uint64_t deadline);

/* Send nothing for duration_ns, watching for connections the server drops. */
void pool_idle(pool_t *p, uint64_t duration_ns, uint64_t deadline);

/* Close the `how_many` most recently opened idle, inactive connections. */
void pool_close_newest(pool_t *p, size_t how_many);

/* Connections currently open (idle or busy), not counting active ones. */
size_t pool_open_passive(const pool_t *p);

#endif /* LOADGEN_POOL_H */
