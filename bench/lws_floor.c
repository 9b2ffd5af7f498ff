/* lws_floor: what libwebsockets itself allows for hello world, without
 * tend: the alternative library the HTTP server's design named beside H2O
 * (Debian's libwebsockets, its own event loop), a C callback answering
 * "hello, world\n" as bench/http_server.lua's hello does (200,
 * text/plain; charset=utf-8, keep-alive), no Lua, no actor. make bench
 * runs it beside H2O alone, tend, nginx + Lua and inets (the "lws" column).
 *   cc -O2 -o /tmp/lws_floor bench/lws_floor.c -lwebsockets
 *   /tmp/lws_floor PORT      (serves on 127.0.0.1:PORT until killed)
 * Prints "port=PORT" once it listens. */
#include <libwebsockets.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

static const char body[] = "hello, world\n";

static int on_http(struct lws *wsi, enum lws_callback_reasons reason,
                   void *user, void *in, size_t len) {
  uint8_t buf[LWS_PRE + 256], *start = &buf[LWS_PRE], *p = start,
                              *end = &buf[sizeof buf - 1];
  switch (reason) {
    case LWS_CALLBACK_HTTP:
      if (lws_add_http_common_headers(wsi, HTTP_STATUS_OK,
                                      "text/plain; charset=utf-8",
                                      sizeof body - 1, &p, end) ||
          lws_finalize_write_http_header(wsi, start, &p, end))
        return 1;
      lws_callback_on_writable(wsi);
      return 0;
    case LWS_CALLBACK_HTTP_WRITEABLE:
      memcpy(start, body, sizeof body - 1);
      if (lws_write(wsi, start, sizeof body - 1, LWS_WRITE_HTTP_FINAL) !=
          (int)(sizeof body - 1))
        return 1;
      return lws_http_transaction_completed(wsi) ? -1 : 0; /* keep-alive */
    default: return lws_callback_http_dummy(wsi, reason, user, in, len);
  }
}

static const struct lws_protocols protocols[] = {
    {"http", on_http, 0, 0, 0, NULL, 0}, {NULL, NULL, 0, 0, 0, NULL, 0}};

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: lws_floor PORT\n");
    return 2;
  }
  prctl(PR_SET_PDEATHSIG, SIGTERM);   /* gone with the script that ran it */
  mallopt(M_TRIM_THRESHOLD, 8 << 20); /* as the tend program (main.c) */
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  lws_set_log_level(LLL_ERR, NULL);
  struct lws_context_creation_info info;
  memset(&info, 0, sizeof info);
  info.port = atoi(argv[1]);
  info.iface = "127.0.0.1";
  info.protocols = protocols;
  info.max_http_header_pool = 256;
  info.options = 0;
  struct lws_context *ctx = lws_create_context(&info);
  if (ctx == NULL) {
    fprintf(stderr, "lws_floor: no context\n");
    return 1;
  }
  printf("port=%s\n", argv[1]);
  fflush(stdout);
  while (lws_service(ctx, 0) >= 0) {
  }
  lws_context_destroy(ctx);
  return 0;
}
