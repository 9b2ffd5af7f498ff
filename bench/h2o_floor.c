/* h2o_floor: what H2O itself allows for hello world, without tend: the
 * library tend.http.serve runs on (Debian's libh2o, built with libuv), one
 * libuv loop, a C handler that answers "hello, world\n" as bench/
 * http_server.lua's hello does (200, text/plain; charset=utf-8), no Lua,
 * no actor. make bench runs it beside tend's server, nginx + Lua and
 * inets (the "h2o" column), under the same wrk.
 *   cc -O2 -o /tmp/h2o_floor bench/h2o_floor.c $(pkg-config --cflags --libs
 * libh2o) -luv /tmp/h2o_floor PORT      (serves on 127.0.0.1:PORT until killed)
 * Prints "port=PORT" once it listens. */
#include <h2o.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <uv.h>

static h2o_globalconf_t config;
static h2o_context_t ctx;
static h2o_accept_ctx_t accept_ctx;

static int on_req(h2o_handler_t *self, h2o_req_t *req) {
  (void)self;
  req->res.status = 200;
  req->res.reason = "OK";
  req->res.content_length = 13;
  h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL,
                 H2O_STRLIT("text/plain; charset=utf-8"));
  h2o_send_inline(req, H2O_STRLIT("hello, world\n"));
  return 0;
}

static void on_close(uv_handle_t *h) {
  free(h);
}

static void on_connection(uv_stream_t *listener, int status) {
  if (status != 0) return;
  uv_tcp_t *conn = malloc(sizeof *conn);
  if (conn == NULL) return;
  uv_tcp_init(listener->loop, conn);
  if (uv_accept(listener, (uv_stream_t *)conn) != 0) {
    uv_close((uv_handle_t *)conn, on_close);
    return;
  }
  h2o_accept(&accept_ctx, h2o_uv_socket_create((uv_stream_t *)conn, on_close));
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: h2o_floor PORT\n");
    return 2;
  }
  prctl(PR_SET_PDEATHSIG, SIGTERM); /* gone with the script that ran it */
  /* glibc's heap kept as the tend program keeps it (src/cli/main.c): else
   * each request's memory pool, freed, gives the top of the heap back and
   * the next one faults it in again (a fifth of the time in malloc) */
  mallopt(M_TRIM_THRESHOLD, 8 << 20);
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  signal(SIGPIPE, SIG_IGN);
  uv_loop_t *loop = uv_default_loop();
  h2o_config_init(&config);
  h2o_hostconf_t *host = h2o_config_register_host(
      &config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
  h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
  h2o_create_handler(path, sizeof(h2o_handler_t))->on_req = on_req;
  h2o_context_init(&ctx, loop, &config);
  accept_ctx.ctx = &ctx;
  accept_ctx.hosts = config.hosts;

  uv_tcp_t listener;
  struct sockaddr_in sa;
  uv_tcp_init(loop, &listener);
  uv_ip4_addr("127.0.0.1", atoi(argv[1]), &sa);
  int r = uv_tcp_bind(&listener, (struct sockaddr *)&sa, 0);
  if (r == 0) r = uv_listen((uv_stream_t *)&listener, 1024, on_connection);
  if (r != 0) {
    fprintf(stderr, "h2o_floor: %s\n", uv_strerror(r));
    return 1;
  }
  printf("port=%s\n", argv[1]);
  fflush(stdout);
  return uv_run(loop, UV_RUN_DEFAULT);
}
