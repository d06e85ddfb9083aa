/* SPDX-License-Identifier: MIT */
/* peer.h: a framed wire-protocol connection on libevent (daemons, grmctl). */
#ifndef GRM_PEER_H
#define GRM_PEER_H

#include <stddef.h>
#include <stdint.h>

#include "net/auth.h"
#include "net/wire.h"

struct event_base;
struct peer;

/*
 * Called once per whole message, with the payload in msg.  A dead peer
 * (end of file, socket error, or a message that breaks the framing) is
 * delivered once as msg == NULL with a reason in why; the callee then frees
 * the peer with peer_free.  The callee may call peer_free from any dispatch.
 */
typedef void (*peer_dispatch_fn)(struct peer *p, uint16_t type,
				 struct wire_rd *msg, const char *why,
				 void *arg);

/*
 * For a daemon that moves trace data through peers (at start): memory
 * freed is kept for the next messages instead of going back to the
 * system, which would make each new buffer's pages fault in again
 * (cleared, one by one).
 */
void peer_keep_memory(void);

/* Wraps connected socket fd (owned from now on).  NULL on failure. */
struct peer *peer_new(struct event_base *base, int fd,
		      peer_dispatch_fn dispatch, void *arg, const char *name);
/*
 * Connects to "host:port" (numeric or resolvable host) in the background;
 * the first dispatch is either a message or the failure.  NULL if the
 * address does not parse or cannot be resolved (reason in *why).  With
 * GRM_MM_LINK=local, a Main Monitor on this host is reached through its
 * local door if it has one (net/local.h); else, by TCP.
 */
struct peer *peer_connect(struct event_base *base, const char *hostport,
			  peer_dispatch_fn dispatch, void *arg,
			  const char **why);
/* 1 if p's link is a local door: no kernel receive or transmit stamps
 * (its clock exchanges are timed by the daemons), no TCP keepalive. */
int peer_is_local(const struct peer *p);
void peer_free(struct peer *p);

/* Queues a message; the payload may come in two parts.  Returns 0 or -1. */
int peer_send(struct peer *p, uint16_t type, const void *a, size_t alen,
	      const void *b, size_t blen);
/*
 * A message built in place, with no copy: peer_reserve returns where its
 * payload of at most max bytes goes, at the end of p's queue (NULL: p is
 * dead, max is over WIRE_MAX, or no memory); peer_commit(p, type, len)
 * then queues it, its first len bytes.  Nothing may be sent to p between
 * the two; a reservation not committed is dropped by the next one.
 */
void *peer_reserve(struct peer *p, size_t max);
int peer_commit(struct peer *p, uint16_t type, size_t len);
/*
 * Sends a short message (a[0..alen), at most 64 bytes) at once, in this
 * call, if nothing is queued before it (else queued like peer_send): for
 * a message that cannot wait for the event loop's next turn (a FIRE sent
 * while the LM is busy with a collection).  0 or -1.
 */
int peer_send_now(struct peer *p, uint16_t type, const void *a,
		  size_t alen);
/* p's socket, or -1 if it has none (freed, dead).  For a link whose
 * writes move to another thread once its handshake is made (the LM's
 * fire link): p must then have nothing queued and be sent nothing more. */
int peer_fd(const struct peer *p);
/* The loop reads no more of p's socket (another thread reads it from
 * now on); what it read already is still dispatched. */
void peer_stop_reading(struct peer *p);
/* Moves the bytes p read and did not dispatch (a message's beginning)
 * into buf[cap]: their count, or SIZE_MAX if more than cap wait. */
size_t peer_take_input(struct peer *p, void *buf, size_t cap);
/* Writes what is queued for p now, as much as the socket takes without
 * waiting (the rest at the loop's next turn): messages sent from inside a
 * long piece of work (a plan's CONTROL or SIGNAL) do not wait for it. */
void peer_flush(struct peer *p);
/*
 * For a daemon busy in a long piece of work (mainmon writing a batch),
 * the messages of another peer that cannot wait for the loop: reads
 * what p's socket holds now (never its end of file or error) and hands
 * p's whole messages, in order, to fn, which returns 1 if it took one
 * (it is then dropped from the input) and 0 to leave it, and every later
 * one, to p's dispatch at the loop's next turn.  p never dies here (a
 * message not taken, or its bad framing, is the dispatch's).  Nothing
 * while p is in its own dispatch.  Returns how many fn took.
 */
typedef int (*peer_take_fn)(struct peer *p, uint16_t type,
			    struct wire_rd *msg, void *arg);
int peer_poll(struct peer *p, peer_take_fn fn, void *arg);
/* The clock peer_send_clock reads: clock(), or CLOCK_MONOTONIC if NULL
 * (a Local Monitor whose host's clock is the TSC). */
void peer_set_clock(struct peer *p, uint64_t (*clock)(void));
/*
 * Sends a message of a clock exchange: a[0..alen) (at most 64 bytes)
 * and then this host's clock (u64; CLOCK_MONOTONIC unless peer_set_clock
 * says otherwise), read (into *t) just before
 * it is written to the socket: at once, in this call, if nothing is
 * queued before it, else queued like peer_send.  The time between the
 * clock read and the send is an error of the exchange (doc/clock-sync.md).
 * 0 or -1.
 */
int peer_send_clock(struct peer *p, uint16_t type, const void *a,
		    size_t alen, uint64_t *t);
/*
 * Queues the HELLO that opens a connection to the MM, in role
 * WIRE_ROLE_LM or WIRE_ROLE_CTL, with this host's name (GRM_HOSTNAME if
 * set, else the system's), the LM's segment id and a new nonce, and starts
 * the handshake in a (doc/protocol.md 1.11).  Until it is complete the
 * peer takes messages of WIRE_PREAUTH_MAX bytes at most.  0 or -1.
 */
int peer_send_hello(struct peer *p, struct auth_client *a,
		    const unsigned char token[MMID_TOKEN_LEN], uint32_t role,
		    uint64_t seg_id);
/* The same with host as the host name, if not NULL (prove replay: one
 * connection for each host of a trace). */
int peer_send_hello_as(struct peer *p, struct auth_client *a,
		       const unsigned char token[MMID_TOKEN_LEN],
		       uint32_t role, uint64_t seg_id, const char *host);
/*
 * Takes a message of the MM's while the handshake is not complete
 * (auth_client_msg): answers a CHALLENGE with AUTH, and once the MM has
 * proved the token lifts the message limit.  Returns what
 * auth_client_msg said (AUTH_BAD too if the answer cannot be queued).
 */
enum auth_result peer_auth(struct peer *p, struct auth_client *a,
			   uint16_t type, struct wire_rd *msg,
			   uint32_t *node, char *text, size_t textsz);
/* The longest message p takes (WIRE_MAX unless said otherwise): a longer
 * one kills it as "message too long". */
void peer_set_max(struct peer *p, uint32_t max);
/* Whether p died of something its other end did wrong (bad framing, a
 * message cut short by the end of the connection), not of a plain close
 * or a socket error. */
int peer_broken(const struct peer *p);
/* Moves the whole of buf, already framed messages, to the output. */
struct evbuffer;
int peer_send_raw(struct peer *p, struct evbuffer *buf);
/* Queues buf[len], already framed messages. */
int peer_send_bytes(struct peer *p, const void *buf, size_t len);
/*
 * Liveness: a peer from which nothing arrives for secs seconds dies as
 * "silent for N s" (its dispatch gets msg == NULL, and peer_silent says
 * so); the socket gets TCP keepalive (probes every second after one idle
 * second, secs of them) and TCP_USER_TIMEOUT of secs, so a link that
 * goes silent with data unacknowledged is given up by the kernel too.
 * The other end must send something more often than secs (mainmon pings
 * its LMs every second).  A process that was itself stopped does not take
 * its own silence for its peer's.  secs 0 turns it off.  0 or -1.
 */
int peer_set_liveness(struct peer *p, unsigned secs);
/* Whether p died of silence (peer_set_liveness): its own watchdog, or the
 * kernel giving up on it first (ETIMEDOUT). */
int peer_silent(const struct peer *p);
/* When bytes last arrived from p (CLOCK_MONOTONIC ns; its creation's
 * time before any). */
uint64_t peer_last_rx(const struct peer *p);
/*
 * When the last of the bytes read last arrived, by the kernel's receive
 * timestamp (SO_TIMESTAMPNS), on CLOCK_MONOTONIC: before the read, not
 * after the event loop woke up.  Never before they arrived; the read's
 * time (peer_last_rx) when the kernel gave no stamp or the real-time
 * clock was set since.  Called while dispatching the message they ended.
 */
uint64_t peer_rx_time(const struct peer *p);
/*
 * When the last message peer_send_clock sent left, by the kernel's
 * transmit timestamp (SO_TIMESTAMPING: when its last byte was handed to
 * the device), on CLOCK_MONOTONIC, and in *age how long after that it
 * was put on CLOCK_MONOTONIC; 0 if unknown: the kernel gives no such
 * stamps (not TCP, before Linux 6.2), the message was queued behind
 * others in p's buffer (only a message written at once is stamped), its
 * stamp has not come yet (it waits in the kernel behind other bytes:
 * asked again, later, it may have) or was lost (the error queue full), or
 * the clock is the TSC (peer_set_clock).  Never before the clock read
 * peer_send_clock made; never after the message's last byte left.
 */
uint64_t peer_tx_time(struct peer *p, uint64_t *age);
/* Bytes queued and not yet written to the socket. */
size_t peer_pending(struct peer *p);
/* Bytes read from p's socket and not yet dispatched (in a dispatch: the
 * message being dispatched's body, and what follows it). */
size_t peer_input_left(const struct peer *p);
/* Calls fn(p, arg) once, when everything queued has been written. */
void peer_on_flushed(struct peer *p, void (*fn)(struct peer *, void *));
/* Whether the other end has sent anything not yet taken as a message:
 * 1 if bytes wait (read, or still in the socket), 0 if none, -1 if it
 * closed the connection or the socket failed.  Does not read. */
int peer_heard(struct peer *p);
/* Copies up to cap bytes of what the other end has sent and p has not
 * yet taken as messages (read, else still in the socket), leaving them
 * to be read; returns how many (0: none, or the peer is dead). */
size_t peer_peek(struct peer *p, void *buf, size_t cap);
const char *peer_name(const struct peer *p);
void *peer_arg(const struct peer *p);

#endif /* GRM_PEER_H */
