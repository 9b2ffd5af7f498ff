/* body: streamed answers of the HTTP server (see server.h).
 *
 * tend_httpd_stream starts the answer (status, headers: its head goes out
 * at once) and names the actor that makes the body. Each chunk given to
 * tend_httpd_stream_send is copied and handed to H2O; H2O calls the
 * generator's proceed once it has written it out (to the socket under
 * HTTP/1.1, as DATA frames under HTTP/2, as far as the client's flow
 * control lets it), and only then is the actor told { tend = "http_more",
 * id }: at most one chunk is in flight per request, whatever the client's
 * speed. A client that goes away mid-stream makes H2O dispose the
 * request: the owner is told { tend = "http_gone", id }. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/io/http/server_int.h"

static void on_proceed(h2o_generator_t *g, h2o_req_t *req) {
  (void)req;
  httpd_req *r = H2O_STRUCT_FROM_MEMBER(httpd_req, gen, g);
  free(r->chunk);
  r->chunk = NULL;
  r->in_flight = 0;
  if (r->aborted) { /* the server closed while this chunk was in flight */
    r->aborted = 0;
    h2o_send(r->req, NULL, 0, H2O_SEND_STATE_ERROR);
    return;
  }
  tend_httpd *s = r->srv;
  if (s == NULL) return; /* ended or forgotten: nobody asks for more */
  if (s->in_send) {      /* inside h2o_send: tend_httpd_stream_send tells */
    r->more = 1;
    return;
  }
  tend_httpd_tell(NULL, s, "http_more", tend_httpd_req_id(s, r), r->actor_id,
                  r->actor_gen);
}

/* H2O stops a response abruptly only when it disposes the request, which
 * on_req_dispose handles. */
static void on_stop(h2o_generator_t *g, h2o_req_t *req) {
  (void)g;
  (void)req;
}

void tend_httpd_stream_disposed(httpd_req *r) {
  free(r->chunk);
  r->chunk = NULL;
  tend_httpd *s = r->srv;
  if (s == NULL) return; /* ended: nothing to tell */
  int64_t id = tend_httpd_req_id(s, r);
  tend_slots_release(&s->reqs, r->id);
  r->srv = NULL;
  if (!s->in_send)
    tend_httpd_tell(NULL, s, "http_gone", id, s->owner_id, s->owner_gen);
}

void tend_httpd_stream_abort(httpd_req *r) {
  tend_httpd *s = r->srv;
  tend_slots_release(&s->reqs, r->id);
  r->srv = NULL;
  if (r->in_flight)
    r->aborted = 1; /* ended at its proceed (else H2O waits for it forever) */
  else
    h2o_send(r->req, NULL, 0, H2O_SEND_STATE_ERROR);
}

int tend_httpd_stream(lua_State *L, tend_httpd *s, int64_t id, int status,
                      int hidx, uint32_t actor_id, uint32_t actor_gen) {
  httpd_req *r = tend_httpd_req(s, id);
  if (r == NULL || r->streaming) return 0;
  h2o_req_t *req = r->req;
  if (hidx < 0) hidx = lua_gettop(L) + hidx + 1;
  req->res.status = status;
  req->res.reason = tend_httpd_reason(status);
  if (hidx) tend_httpd_add_headers(L, req, hidx);
  r->streaming = 1;
  r->actor_id = actor_id;
  r->actor_gen = actor_gen;
  r->gen.proceed = on_proceed;
  r->gen.stop = on_stop;
  h2o_start_response(req, &r->gen);
  return tend_httpd_stream_send(L, s, id, NULL, 0, 0);
}

int tend_httpd_stream_send(lua_State *L, tend_httpd *s, int64_t id,
                           const char *data, size_t len, int end) {
  httpd_req *r = tend_httpd_req(s, id);
  if (r == NULL) return 0;
  if (!r->streaming)
    luaL_error(L, "tend.http: request %I is not streamed", (lua_Integer)id);
  if (r->in_flight)
    luaL_error(L, "tend.http: request %I: a chunk is still in flight",
               (lua_Integer)id);
  h2o_iovec_t buf = {NULL, 0};
  if (len > 0) {
    r->chunk = malloc(len);
    if (r->chunk == NULL) luaL_error(L, "tend.http: out of memory");
    memcpy(r->chunk, data, len);
    buf = h2o_iovec_init(r->chunk, len);
  }
  h2o_send_state_t state = end == 0   ? H2O_SEND_STATE_IN_PROGRESS
                           : end == 1 ? H2O_SEND_STATE_FINAL
                                      : H2O_SEND_STATE_ERROR;
  uint32_t aid = r->actor_id, agen = r->actor_gen;
  if (end) { /* the last: H2O may dispose it from here on */
    tend_slots_release(&s->reqs, r->id);
    r->srv = NULL;
  }
  r->in_flight = 1;
  r->more = 0;
  s->in_send = 1;
  h2o_send(r->req, len > 0 ? &buf : NULL, len > 0 ? 1 : 0, state);
  s->in_send = 0;
  if (end) return 1;
  r = tend_httpd_req(s, id); /* disposed inside? */
  if (r == NULL) return 0;
  if (r->more) {
    r->more = 0;
    tend_httpd_tell(L, s, "http_more", id, aid, agen);
  }
  return 1;
}
