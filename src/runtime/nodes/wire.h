/* wire: the bytes the nodes exchange (lua/tend/node.lua speaks them, over
 * NATS, nats.c, or the simulated bus, simnodes.c). The one place that
 * knows the layout:
 *
 *   envelope  TEND_WIRE_HEADER_PREFIX bytes: the header's length (big
 *             endian), the header (a list, codec.h, whose first item is
 *             a kind below), then the body: the encoded message of MSG
 *             and PG, nothing for the others.
 *   batch     what one transport message on "tend.n.<node>" carries:
 *             envelopes, each after TEND_WIRE_LENGTH_PREFIX bytes of its
 *             length (big endian). A node's envelopes of one pass of the
 *             loop share one (nats.c); the simulated bus sends batches of
 *             one.
 *
 * A heartbeat (HB, HELLO) on "tend.hb" and the answer to a PROBE are an
 * envelope alone, in no batch. The bytes come from other processes:
 * nothing here trusts them (a length past the end is refused). Bytes
 * only: the header's and body's encoding is the codec's (codec.h), and
 * src/api/lcodec.c joins the two for Lua (core.wire_*). */
#ifndef TEND_WIRE_H
#define TEND_WIRE_H

#include <stddef.h>

/* The subjects: a node's own (its name after this prefix) and the one
 * every node takes (heartbeats). */
#define TEND_WIRE_TO_NODE "tend.n."
#define TEND_WIRE_HEARTBEATS "tend.hb"

#define TEND_WIRE_LENGTH_PREFIX 4          /* an envelope's length in a batch */
#define TEND_WIRE_ENVELOPE_MAX 0xffffffffu /* the most it can say */
#define TEND_WIRE_HEADER_PREFIX 2          /* a header's length */
#define TEND_WIRE_HEADER_MAX 0xffffu       /* the most it can say */

/* The kinds of envelope: X(name, number, header). The numbers travel:
 * never change one. */
#define TEND_WIRE_KINDS(X)                                                  \
  X(MSG, 1, "{MSG, target, sender}, then the message")                      \
  X(WATCH, 2, "{WATCH, target, node}: node watches target")                 \
  X(DOWN, 3, "{DOWN, ref, reason}: a watched actor ended")                  \
  X(HB, 4, "{HB, node, incarnation, service}: a heartbeat")                 \
  X(PROBE, 5, "{PROBE}: is this name taken? (answered {PROBE, node, inc})") \
  X(HELLO, 6, "{HELLO, node, incarnation, service}: a first heartbeat")     \
  X(PG, 7, "{PG, node, incarnation}, then a tend.pg message")

typedef enum tend_wire_kind {
#define TEND_WIRE_ENUM(name, n, header) TEND_WIRE_##name = n,
  TEND_WIRE_KINDS(TEND_WIRE_ENUM)
#undef TEND_WIRE_ENUM
} tend_wire_kind;

/* Writes n, an envelope's length (<= TEND_WIRE_ENVELOPE_MAX), at p:
 * TEND_WIRE_LENGTH_PREFIX bytes. */
void tend_wire_put_length(unsigned char *p, size_t n);

/* The envelope of a batch of n bytes at *pos: returns 1 with env and len
 * set and *pos past it, 0 at the end, -1 when the bytes left are no
 * envelope (a length cut short or past the end). */
int tend_wire_next(const char *batch, size_t n, size_t *pos, const char **env,
                   size_t *len);

/* The size of the envelope of a header of hn bytes and a body of bn, or
 * 0 when the header is over TEND_WIRE_HEADER_MAX bytes. */
size_t tend_wire_envelope_size(size_t hn, size_t bn);

/* Writes that envelope at dst (tend_wire_envelope_size(hn, bn) bytes). */
void tend_wire_envelope_put(char *dst, const char *header, size_t hn,
                            const char *body, size_t bn);

/* Splits an envelope of n bytes: returns 0 with its header's hn bytes and
 * its body's bn set, or -1 when the header's length runs past its end. */
int tend_wire_split(const char *env, size_t n, const char **header, size_t *hn,
                    const char **body, size_t *bn);

#endif
