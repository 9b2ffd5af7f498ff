/* frame: cutting a byte stream into frames (a socket's reads into the
 * messages its actor gets). Three framings: lines ("\n" ends a frame; a
 * "\r" before it is dropped), 4-byte big-endian length prefixes, or raw
 * (each piece fed is a frame). A frame longer than the bound is an error
 * (the stream is then unusable): memory stays bounded by it. Pure: no I/O,
 * no Lua. */
#ifndef TEND_FRAME_H
#define TEND_FRAME_H

#include <stddef.h>
#include <stdint.h>

typedef enum tend_framing {
  TEND_FRAME_LINE,
  TEND_FRAME_LENGTH,
  TEND_FRAME_RAW
} tend_framing;

typedef struct tend_framer {
  tend_framing mode;
  size_t max;      /* longest frame */
  char *buf;       /* a frame begun and not ended, or NULL */
  size_t len, cap; /* bytes in buf, its size */
} tend_framer;

/* Called per whole frame; returns 0 to go on, or nonzero to stop feeding
 * (the rest of the piece is dropped). */
typedef int (*tend_frame_fn)(void *ud, const char *frame, size_t n);

void tend_framer_init(tend_framer *f, tend_framing mode, size_t max);
void tend_framer_free(tend_framer *f);
/* Feeds n bytes; calls fn per frame they end. Returns 0, 1 when fn asked
 * to stop, -1 when a frame is over the bound, -2 when memory ran out. */
int tend_framer_feed(tend_framer *f, const char *data, size_t n,
                     tend_frame_fn fn, void *ud);
/* The stream ended: a line begun and not ended is a frame (given to fn);
 * a length frame cut short is dropped. */
void tend_framer_end(tend_framer *f, tend_frame_fn fn, void *ud);
/* Bytes needed to frame n bytes of payload (the header or newline). */
size_t tend_frame_overhead(tend_framing mode);
/* Writes the header of a frame of n bytes into out (tend_frame_overhead
 * bytes: 4 for lengths, 0 otherwise; the newline of a line is a trailer:
 * tend_frame_trailer). */
void tend_frame_header(tend_framing mode, size_t n, char out[4]);
/* The trailer ("\n" for lines, "" otherwise). */
const char *tend_frame_trailer(tend_framing mode);

#endif
