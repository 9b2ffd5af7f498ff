/* tcprec: the records of tcp.h and the host's tcp state, shared by tcp.c
 * (connections: reading, writing, ending) and tcplisten.c (listening,
 * accepting, connecting). Not for other files: they use tcp.h. */
#ifndef TEND_TCPREC_H
#define TEND_TCPREC_H

#include "runtime/io/tcp/tcp.h"

#define TCP_READ_SIZE 65536 /* the shared read buffer */
/* A socket closed with writes queued has this long (ms) to hand them to
 * its peer; then it is reset (RST) and its queue dropped (gen_tcp's
 * {linger, {true, 5}}): a peer that does not read never keeps it. */
#define TCP_LINGER_MS 5000

enum tcp_phase {
  TCP_CONNECTING,  /* resolving or connecting (tend_tcp_connect) */
  TCP_OPEN,        /* connected; reading once started */
  TCP_INPUT_ENDED, /* the peer ended its side (eof): closed message sent,
                      the owner ended; writing still works until it closes */
  TCP_CLOSED       /* ended: closed message sent, handle closing */
};

struct tend_sock {
  uv_tcp_t tcp;            /* the handle (handle_open) */
  struct tcp_state *st;    /* the host's tcp state (NULL once handle closed) */
  tend_sock *prev, *next;  /* in st->socks */
  tend_sock *owner_next;   /* the next socket of the same owner */
  tend_listener *listener; /* accepted by it, while counted, else NULL */
  tend_sock *pend_next;    /* accepted and not started (listener's list) */
  uint32_t owner_id, owner_gen; /* owner (0: none) */
  uint32_t to_id, to_gen;       /* who reads (0: not started) */
  uint32_t wait_id, wait_gen;   /* a waiter's promise (connect, drain), or 0 */
  tend_framer framer;
  uint8_t phase;       /* tcp_phase */
  uint8_t handle_open; /* 1: the uv handle is initialized, not closed yet */
  uint8_t reading;     /* 1: uv_read_start in effect */
  uint8_t paused;      /* 1: reads stopped for back-pressure (in st->paused) */
  uint8_t lua_gone;    /* 1: its userdata was collected */
  uint8_t pending;     /* uv requests in flight (getaddrinfo, connect, ...) */
  int ud_ref;          /* registry ref of its userdata while open */
  const char *error;   /* why a connect failed (static text), or NULL */
  struct tcp_connect *conn; /* connect requests, while connecting */
  uv_timer_t *linger;       /* while it shuts down: resets it at the end */
  tend_sock *paused_next;   /* in st->paused */
};

/* A listener binds with its uv_tcp_t, and accepts itself (accept4 when its
 * uv_poll_t says so), not through uv_listen: libuv closes the connections
 * it cannot accept for want of descriptors without telling (its EMFILE
 * trick), and a listener counts them. */
struct tend_listener {
  uv_tcp_t tcp;   /* the socket, bound (never uv_listen'ed) */
  uv_poll_t poll; /* readable: connections to accept */
  int fd;         /* the socket's descriptor (tcp's) */
  struct tcp_state *st;
  tend_listener *prev, *next; /* in st->listeners */
  uint32_t owner_id, owner_gen;
  int port;
  int max_connections;
  int live;         /* accepted connections not yet ended */
  uint64_t refused; /* closed at once: over max_connections, or out of
                       descriptors or memory */
  uint8_t open;     /* 1: listening */
  uint8_t handles;  /* uv handles not closed yet (tcp, poll) */
  uint8_t lua_gone;
  uint8_t shedding; /* 1: in a burst out of descriptors (logged once) */
  uint8_t stalled;  /* 1: poll stopped (no spare descriptor to shed with)
                       until a connection closes */
  int ud_ref;
  tend_sock *pending; /* accepted, not started: closed with it */
};

/* One per host, made at the first use (host.h: h->tcp). */
typedef struct tcp_state {
  tend_host *h;
  tend_sock *socks;         /* every socket record whose handle is not
                               closed yet (ended ones too, while they
                               shut down): close_all closes them all */
  tend_listener *listeners; /* every listener not yet closed */
  tend_sock *paused;        /* sockets paused for back-pressure */
  uv_prepare_t *drain;      /* while some are paused: before the loop
                              would block, resumes those drained */
  int drain_active;
  char *rbuf;      /* the read buffer (TCP_READ_SIZE) */
  int spare;       /* a descriptor kept to give up when a listener is out
                      of them (to accept and close), or -1 */
  void **by_owner; /* actor id -> first socket/listener it owns */
  uint32_t n_by_owner;
} tcp_state;

/* tcp.c */
tcp_state *tend_tcp_state(tend_host *h);
/* After a uv callback that queued messages or woke an actor. */
void tend_tcp_poke(tcp_state *st);
/* A new socket record (its handle initialized on the loop), in st->socks. */
tend_sock *tend_tcp_sock_new(tcp_state *st);
/* Makes (id, gen) the owner of s (s goes in its chain; flag on the actor). */
void tend_tcp_own(tend_sock *s, uint32_t id, uint32_t gen);
/* Ends s: `to` told, the owner ended, the handle closed (how: graceful
 * lets queued writes out; else at once; reset sends RST). */
void tend_tcp_end(tend_sock *s, const char *reason, int graceful, int reset);
/* Closes the handle of s with no message (refused at once). */
void tend_tcp_drop(tend_sock *s);
/* Frees s when nothing uses it. */
void tend_tcp_free_if_unused(tend_sock *s);
/* Ends a wait for s with code (1 ok, 0 failed). */
void tend_tcp_resolve(tend_sock *s, int code);

/* tcplisten.c */
/* A socket accepted by l ended: one connection fewer. */
void tend_tcp_listener_lost(tend_listener *l, tend_sock *s);
/* The owner of l died: it closes. */
void tend_tcp_listener_owner_died(tcp_state *st, uint32_t id, uint32_t gen);
void tend_tcp_listeners_close_all(tcp_state *st);
/* The port of the open listener (id, gen) owns, or -1. */
int tend_tcp_listener_port_of(tcp_state *st, uint32_t id, uint32_t gen);
/* A descriptor was freed: listeners stalled for want of one accept again. */
void tend_tcp_listeners_resume(tcp_state *st);

#endif
